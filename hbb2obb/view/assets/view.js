// hbb2obb-view: the review page (plain JavaScript, no library, nothing from the network).
// Every name from the data (frames, classes, files, sets) is put into the page as text
// (textContent), never as markup.
"use strict";

(function () {
  var ROW = 22, CACHE = 64;
  var S = {
    index: null, order: [], current: -1, frames: {}, pending: {}, images: {}, full: {}, loadedAt: [],
    view: { scale: 1, tx: 0, ty: 0 }, layers: { gt: true, sets: [], hbb: false, unmatched: true, labels: false },
    colour: "iou", mode: "overlay", statSet: 0, sortKey: "name", sortDir: 1, selected: null, focus: null,
    worst: [], worstPos: -1, drawn: [[], []], lowerNames: [], draws: 0
  };
  var api = window.hbb2obb = { state: S, timings: {} };

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function fmt(x, digits) { return x == null || isNaN(x) ? "–" : x.toFixed(digits); }
  function className(k) {
    var name = S.index.classes[String(k)];
    return name == null ? "class " + k : name;
  }
  function frameCount() { return S.index.frames.name.length; }
  function stat(key, i) {
    var st = S.index.stats[S.statSet];
    return st && st[key] ? st[key][i] : null;
  }

  function loadScript(src, onerror) {
    var s = document.createElement("script");
    s.src = src;
    s.onerror = onerror;
    document.body.appendChild(s);
  }

  window.hbb2obbIndex = function (data) {
    S.index = data;
    api.timings.index = performance.now();  // milliseconds since the page was asked for
    init();
  };

  window.hbb2obbFrame = function (i, data) {
    S.frames[i] = data;
    delete S.pending[i];
    S.loadedAt.push(i);
    while (S.loadedAt.length > CACHE) {  // keep the page's memory bounded on long reviews
      var old = S.loadedAt.shift();
      if (old !== S.current) delete S.frames[old];
    }
    if (i === S.current) { draw(); details(); }
  };

  // ---- set-up -------------------------------------------------------------------------------------
  function init() {
    var idx = S.index, f = idx.frames;
    document.title = idx.title + " · hbb2obb-view";
    $("title").textContent = idx.title;
    S.lowerNames = f.name.map(function (n) { return n.toLowerCase(); });
    var setLayers = $("set-layers");
    idx.sets.forEach(function (name, s) {
      S.layers.sets.push(true);
      var label = el("label"), box = el("input");
      box.type = "checkbox"; box.checked = true; box.id = "layer-set-" + s;
      box.addEventListener("change", function () { S.layers.sets[s] = box.checked; changed(); });
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + name + " "));
      if (s < 9) label.appendChild(el("kbd", null, String(s + 1)));
      setLayers.appendChild(label);
      var option = el("option", null, name);
      option.value = String(s);
      $("stat-set").appendChild(option);
    });
    if (!idx.hasGt) {
      $("layer-gt-label").hidden = true;
      $("colour").querySelector("option[value=iou]").textContent = "label set";
    }
    if (!idx.hasHbb) $("layer-hbb-label").hidden = true;
    if (idx.sets.length < 2) { $("mode-label").hidden = true; $("stat-set-label").hidden = true; }
    S.colour = idx.hasGt ? "iou" : idx.confRange ? "conf" : "class";
    $("colour").value = S.colour;
    var classes = {};
    f.cls.forEach(function (ids) { ids.forEach(function (k) { classes[k] = true; }); });
    Object.keys(idx.classes).forEach(function (k) { classes[k] = true; });
    Object.keys(classes).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
      var option = el("option", null, className(k) + " (" + k + ")");
      option.value = String(k);
      $("f-class").appendChild(option);
    });
    S.worst = idx.worst.slice().sort(function (a, b) { return a[3] - b[3]; });
    wire();
    syncControls();
    legend();
    renderWorst();
    applyFilter();
    var start = S.order.length ? S.order[0] : (frameCount() ? 0 : -1);
    if (start >= 0) showFrame(start); else $("status").textContent = "no frame to show";
  }

  function checkbox(id, key) {
    $(id).addEventListener("change", function () { S.layers[key] = $(id).checked; changed(); });
  }

  function wire() {
    checkbox("layer-gt", "gt"); checkbox("layer-hbb", "hbb");
    checkbox("layer-unmatched", "unmatched"); checkbox("layer-labels", "labels");
    $("colour").addEventListener("change", function () { S.colour = $("colour").value; changed(); });
    $("mode").addEventListener("change", function () { S.mode = $("mode").value; changed(); });
    $("stat-set").addEventListener("change", function () { S.statSet = +$("stat-set").value; applyFilter(); });
    ["f-name", "f-class", "f-iou-min", "f-iou-max"].forEach(function (id) {
      $(id).addEventListener("input", applyFilter);
    });
    Array.prototype.forEach.call(document.querySelectorAll("#list-head button"), function (button) {
      button.addEventListener("click", function () {
        var key = button.getAttribute("data-key");
        S.sortDir = S.sortKey === key ? -S.sortDir : 1;
        S.sortKey = key;
        applyFilter();
      });
    });
    $("list").addEventListener("scroll", renderList);
    window.addEventListener("resize", function () { draw(); renderList(); });
    document.addEventListener("keydown", onKey);
    [0, 1].forEach(function (v) { pointer($("canvas-" + v), v); });
  }

  function changed() {
    syncControls();
    legend();
    draw();
    details();
  }

  function syncControls() {
    $("layer-gt").checked = S.layers.gt; $("layer-hbb").checked = S.layers.hbb;
    $("layer-unmatched").checked = S.layers.unmatched; $("layer-labels").checked = S.layers.labels;
    S.layers.sets.forEach(function (on, s) { $("layer-set-" + s).checked = on; });
    $("colour").value = S.colour; $("mode").value = S.mode;
    $("view-1").classList.toggle("off", !side());
  }

  function side() { return S.mode === "side" && S.index.sets.length > 1; }

  // ---- the frame list: filtered, sorted, drawn a screenful at a time ------------------------------
  function applyFilter() {
    var f = S.index.frames, n = frameCount(), out = [];
    var query = $("f-name").value.toLowerCase(), cls = $("f-class").value;
    var low = parseFloat($("f-iou-min").value), high = parseFloat($("f-iou-max").value);
    var byIou = !isNaN(low) || !isNaN(high), k = cls === "" ? null : +cls;
    for (var i = 0; i < n; i++) {
      if (query && S.lowerNames[i].indexOf(query) < 0) continue;
      if (k !== null && f.cls[i].indexOf(k) < 0) continue;
      if (byIou) {
        var m = stat("mean", i);
        if (m == null || (!isNaN(low) && m < low) || (!isNaN(high) && m > high)) continue;
      }
      out.push(i);
    }
    var key = S.sortKey, dir = S.sortDir;
    var value = key === "name" ? function (i) { return S.lowerNames[i]; } : function (i) { return stat(key, i); };
    out.sort(function (a, b) {
      var x = value(a), y = value(b);
      if (x == null || y == null) return x == null ? (y == null ? a - b : 1) : -1;  // no value: last
      return x < y ? -dir : x > y ? dir : a - b;
    });
    S.order = out;
    Array.prototype.forEach.call(document.querySelectorAll("#list-head button"), function (button) {
      button.classList.toggle("sorted", button.getAttribute("data-key") === key);
    });
    $("count").textContent = out.length + " of " + n + " frames";
    $("list-space").style.height = out.length * ROW + "px";
    renderList();
  }

  function renderList() {
    var list = $("list"), space = $("list-space");
    var first = Math.max(0, Math.floor(list.scrollTop / ROW) - 2);
    var last = Math.min(S.order.length, first + Math.ceil(list.clientHeight / ROW) + 4);
    var names = S.index.frames.name;
    space.textContent = "";
    for (var k = first; k < last; k++) {
      var i = S.order[k], row = el("div", i === S.current ? "row current" : "row");
      row.style.top = k * ROW + "px";
      row.setAttribute("data-frame", String(i));
      row.appendChild(el("span", null, names[i])).title = names[i];
      row.appendChild(el("span", "num", fmt(stat("mean", i), 3)));
      row.appendChild(el("span", "num", stat("ugt", i) == null ? "–" : String(stat("ugt", i))));
      row.appendChild(el("span", "num", stat("upred", i) == null ? "–" : String(stat("upred", i))));
      var low = stat("cmin", i), high = stat("cmax", i);
      row.appendChild(el("span", "num", low == null ? "–" : fmt(low, 2) + "–" + fmt(high, 2)));
      row.addEventListener("click", function (e) { showFrame(+e.currentTarget.getAttribute("data-frame")); });
      space.appendChild(row);
    }
  }

  function scrollToCurrent() {
    var k = S.order.indexOf(S.current), list = $("list");
    if (k < 0) return;
    if (k * ROW < list.scrollTop || (k + 1) * ROW > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, k * ROW - list.clientHeight / 2);
    }
  }

  function renderWorst() {
    var box = $("worst"), names = S.index.frames.name, many = S.index.sets.length > 1;
    box.textContent = "";
    if (!S.worst.length) box.appendChild(el("div", "hint", S.index.hasGt ? "no matched pair" : "needs ground truth"));
    S.worst.forEach(function (w, k) {
      var label = "IoU " + fmt(w[3], 3) + "  " + names[w[1]] + (many ? "  · " + S.index.sets[w[0]] : "");
      var item = el("div", k === S.worstPos ? "item current" : "item", label);
      item.addEventListener("click", function () { gotoWorst(k); });
      box.appendChild(item);
    });
  }

  function gotoWorst(k) {
    if (!S.worst.length) return;
    S.worstPos = (k + S.worst.length) % S.worst.length;
    var w = S.worst[S.worstPos];
    S.layers.sets[w[0]] = true;
    S.focus = { layer: "gt", s: -1, i: w[2] };
    renderWorst();
    var items = $("worst").children[S.worstPos];
    if (items) items.scrollIntoView({ block: "nearest" });
    showFrame(w[1], true);
    syncControls();
  }

  // ---- frames: data and pictures loaded on demand --------------------------------------------------
  function ensureData(i) {
    if (i < 0 || i >= frameCount() || S.frames[i] || S.pending[i]) return;
    S.pending[i] = true;
    loadScript("data/frames/" + i + ".js", function () {
      delete S.pending[i];
      if (i === S.current) $("status").textContent = "cannot load data/frames/" + i + ".js";
    });
  }

  function picture(i) {
    var src = S.index.frames.img[i];
    if (!src) return null;
    if (!S.images[i]) {
      var image = new Image();
      image.onload = function () { if (i === S.current) draw(); };
      image.src = src;
      S.images[i] = image;
    }
    return S.images[i];
  }

  function showFrame(i, keepView) {
    var fresh = i !== S.current;
    S.current = i;
    if (fresh) S.selected = null;
    if (fresh && !keepView) fit();
    ensureData(i);
    picture(i);
    var k = S.order.indexOf(i);  // the next frame, loaded while this one is looked at
    if (k >= 0 && k + 1 < S.order.length) ensureData(S.order[k + 1]);
    document.body.setAttribute("data-frame", String(i));
    scrollToCurrent();
    renderList();
    legend();
    draw();
    details();
  }

  function step(delta) {
    if (!S.order.length) return;
    var k = S.order.indexOf(S.current);
    k = k < 0 ? 0 : Math.max(0, Math.min(S.order.length - 1, k + delta));
    showFrame(S.order[k]);
  }

  // ---- the view: pan and zoom ---------------------------------------------------------------------
  function canvasSize() {
    var c = $("canvas-0");
    return [c.clientWidth || 1, c.clientHeight || 1];
  }

  function frameSize(i) { return [S.index.frames.w[i], S.index.frames.h[i]]; }

  function fit() {
    if (S.current < 0) return;
    var size = canvasSize(), fs = frameSize(S.current);
    var scale = Math.min(size[0] / fs[0], size[1] / fs[1]) * 0.98;
    S.view = { scale: scale, tx: (size[0] - fs[0] * scale) / 2, ty: (size[1] - fs[1] * scale) / 2 };
  }

  function zoomAt(x, y, factor) {
    var v = S.view, scale = Math.max(1e-3, Math.min(200, v.scale * factor));
    v.tx = x - (x - v.tx) * scale / v.scale;
    v.ty = y - (y - v.ty) * scale / v.scale;
    v.scale = scale;
    draw();
  }

  function pan(dx, dy) { S.view.tx += dx; S.view.ty += dy; draw(); }

  function focusOn(extent) {
    var size = canvasSize(), w = Math.max(extent[2] - extent[0], 4), h = Math.max(extent[3] - extent[1], 4);
    var scale = Math.min(size[0] / w, size[1] / h) / 4;
    S.view = { scale: scale, tx: size[0] / 2 - (extent[0] + extent[2]) / 2 * scale,
               ty: size[1] / 2 - (extent[1] + extent[3]) / 2 * scale };
  }

  function pointer(canvas, v) {
    var down = null;
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = canvas.getBoundingClientRect();
      zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
    }, { passive: false });
    canvas.addEventListener("mousedown", function (e) {
      down = { x: e.clientX, y: e.clientY, moved: false };
      e.preventDefault();
    });
    window.addEventListener("mousemove", function (e) {
      if (!down) return;
      var dx = e.clientX - down.x, dy = e.clientY - down.y;
      if (down.moved || Math.abs(dx) + Math.abs(dy) > 3) {
        down.moved = true;
        down.x = e.clientX; down.y = e.clientY;
        pan(dx, dy);
      }
    });
    window.addEventListener("mouseup", function (e) {
      if (!down) return;
      var clicked = !down.moved;
      down = null;
      if (clicked && e.target === canvas) {
        var r = canvas.getBoundingClientRect();
        pick(v, e.clientX - r.left, e.clientY - r.top);
      }
    });
  }

  function onKey(e) {
    var tag = e.target && e.target.tagName;
    if ((tag === "INPUT" && e.target.type !== "checkbox") || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    var size = canvasSize(), key = e.key, handled = true;
    if (key === "n" || key === "j" || key === "PageDown") step(1);
    else if (key === "p" || key === "k" || key === "PageUp") step(-1);
    else if (key === "]") gotoWorst(S.worstPos + 1);
    else if (key === "[") gotoWorst(S.worstPos - 1);
    else if (key === "ArrowLeft") pan(size[0] / 10, 0);
    else if (key === "ArrowRight") pan(-size[0] / 10, 0);
    else if (key === "ArrowUp") pan(0, size[1] / 10);
    else if (key === "ArrowDown") pan(0, -size[1] / 10);
    else if (key === "+" || key === "=") zoomAt(size[0] / 2, size[1] / 2, 1.25);
    else if (key === "-" || key === "_") zoomAt(size[0] / 2, size[1] / 2, 0.8);
    else if (key === "0") { fit(); draw(); }
    else if (key === "g") { S.layers.gt = !S.layers.gt; changed(); }
    else if (key === "h") { S.layers.hbb = !S.layers.hbb; changed(); }
    else if (key === "u") { S.layers.unmatched = !S.layers.unmatched; changed(); }
    else if (key === "l") { S.layers.labels = !S.layers.labels; changed(); }
    else if (key === "c") {
      var modes = ["iou", "conf", "class"];
      S.colour = modes[(modes.indexOf(S.colour) + 1) % 3];
      changed();
    } else if (key === "s" && S.index.sets.length > 1) { S.mode = side() ? "overlay" : "side"; changed(); }
    else if (key >= "1" && key <= "9" && +key <= S.index.sets.length) {
      S.layers.sets[+key - 1] = !S.layers.sets[+key - 1];
      changed();
    } else if (key === "Escape") { S.selected = null; draw(); details(); }
    else handled = false;
    if (handled) e.preventDefault();
  }

  // ---- drawing --------------------------------------------------------------------------------------
  function shownSets(v) {
    var on = [];
    S.layers.sets.forEach(function (visible, s) { if (visible) on.push(s); });
    if (!side()) return v === 0 ? on : [];
    var s = v === 0 ? 0 : 1;
    return S.layers.sets[s] ? [s] : [];
  }

  function items(v, d) {
    var out = [], sets = shownSets(v), idx = S.index, colour = S.colour, st = HV.STYLE;
    var range = idx.confRange || [0, 1];
    if (d.hbb && idx.hasHbb && S.layers.hbb) {
      for (var i = 0; i < d.hbb.k.length; i++) {
        out.push({ layer: "hbb", s: -1, i: i, c: d.hbb.c, dash: [3, 3], width: 1.2,
                   colour: colour === "class" ? HV.classColour(d.hbb.k[i]) : st.prompt });
      }
    }
    if (d.gt && S.layers.gt) {
      for (i = 0; i < d.gt.k.length; i++) {
        var missed = sets.some(function (s) { return d.sets[s].m && d.sets[s].m[i] < 0; });
        if (missed && !S.layers.unmatched) continue;
        out.push({ layer: "gt", s: -1, i: i, c: d.gt.c, dash: missed ? [6, 3] : [], width: missed ? 2.5 : 1.5,
                   named: missed || !sets.length,  // a matched box's name is its prediction's: written once
                   colour: colour === "class" ? HV.classColour(d.gt.k[i]) : missed ? st.unmatchedGt : st.gt });
      }
    }
    sets.forEach(function (s) {
      var p = d.sets[s];
      for (var j = 0; j < p.k.length; j++) {
        var matched = !p.pg || p.pg[j] >= 0;
        if (!matched && !S.layers.unmatched) continue;
        var c;
        if (colour === "class") c = HV.classColour(p.k[j]);
        else if (colour === "conf") c = p.s ? HV.confColour(p.s[j], range[0], range[1]) : st.sets[s % 5];
        else if (p.pg) c = matched ? HV.iouColour(p.piou[j]) : st.unmatchedPred;
        else c = st.sets[s % 5];
        out.push({ layer: "set", s: s, i: j, c: p.c, colour: c, width: matched ? 2 : 2.5,
                   dash: !matched ? [2, 3] : (!side() && s > 0 ? [8, 4] : []) });
      }
    });
    return out;
  }

  function stroke(ctx, item, scale, width, colour, dash) {
    ctx.beginPath();
    HV.path(ctx, item.c, item.i);
    ctx.lineWidth = width / scale;
    ctx.setLineDash(dash.map(function (x) { return x / scale; }));
    ctx.strokeStyle = colour;
    ctx.stroke();
  }

  function same(a, b) { return a && b && a.layer === b.layer && a.s === b.s && a.i === b.i; }

  function draw() {
    if (!S.index || S.current < 0) return;
    var d = S.frames[S.current];
    if (d && S.focus) {  // a worst box asked for: zoom on it and select it, once its frame's data is here
      var target = S.focus.layer === "gt" ? d.gt : null;
      if (target && S.focus.i < target.k.length) {
        focusOn(HV.extent(target.c, S.focus.i));
        S.selected = S.focus;
      }
      S.focus = null;
      details();
    }
    [0, 1].forEach(function (v) { drawView(v); });
    captions();
  }

  function drawView(v) {
    var canvas = $("canvas-" + v), ctx = canvas.getContext("2d"), dpr = window.devicePixelRatio || 1;
    if (v === 1 && !side()) { S.drawn[1] = []; return; }
    var cw = canvas.clientWidth, ch = canvas.clientHeight;
    if (canvas.width !== Math.round(cw * dpr) || canvas.height !== Math.round(ch * dpr)) {
      canvas.width = Math.round(cw * dpr);
      canvas.height = Math.round(ch * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#1b1b1b";
    ctx.fillRect(0, 0, cw, ch);
    var i = S.current, d = S.frames[i], fs = frameSize(i), view = S.view;
    ctx.setTransform(dpr * view.scale, 0, 0, dpr * view.scale, dpr * view.tx, dpr * view.ty);
    var image = picture(i), full = S.index.frames.full[i];
    if (image && image.complete && image.naturalWidth) {
      var sharp = image;
      if (full && view.scale * dpr > image.naturalWidth / fs[0] * 1.25) {  // zoomed past the downscaled frame
        if (!S.full[i]) {
          S.full[i] = new Image();
          S.full[i].onload = function () { if (i === S.current) draw(); };
          S.full[i].src = full;
        }
        if (S.full[i].complete && S.full[i].naturalWidth) sharp = S.full[i];
      }
      ctx.imageSmoothingEnabled = view.scale * dpr < sharp.naturalWidth / fs[0] * 2;
      ctx.drawImage(sharp, 0, 0, fs[0], fs[1]);
      canvas.setAttribute("data-resolution", sharp === image ? "downscaled" : "full");
    } else {
      ctx.fillStyle = "#2b2b2b";
      ctx.fillRect(0, 0, fs[0], fs[1]);
    }
    if (!d) { S.drawn[v] = []; return; }
    var list = items(v, d), scale = view.scale;
    S.drawn[v] = list;
    list.forEach(function (item) {  // a dark edge first: bright lines stay readable on light ground
      stroke(ctx, item, scale, item.width + 2, "rgba(0,0,0,0.6)", []);
      stroke(ctx, item, scale, item.width, item.colour, item.dash);
    });
    if (S.selected) {
      list.forEach(function (item) {
        if (same(item, S.selected)) {
          stroke(ctx, item, scale, 6, "rgba(0,0,0,0.8)", []);
          stroke(ctx, item, scale, 3.5, HV.STYLE.selected, []);
        } else if (pairedWithSelected(item, d)) {
          stroke(ctx, item, scale, 5, "rgba(0,0,0,0.8)", []);
          stroke(ctx, item, scale, 3, HV.STYLE.pair, []);
        }
      });
    }
    if (S.layers.labels) labels(ctx, list, dpr);
    S.draws += 1;
    document.body.setAttribute("data-draws", String(S.draws));
    if (!api.timings.firstFrame) {
      api.timings.firstFrame = performance.now();
      document.body.setAttribute("data-ready", "1");
    }
  }

  function labels(ctx, list, dpr) {
    var v = S.view;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.setLineDash([]);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textBaseline = "bottom";
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(0,0,0,0.8)";
    list.slice(0, 4000).forEach(function (item) {
      if (item.layer === "hbb" || (item.layer === "gt" && !item.named)) return;
      var k = item.layer === "gt" ? S.frames[S.current].gt.k[item.i] : S.frames[S.current].sets[item.s].k[item.i];
      var e = HV.extent(item.c, item.i), x = e[0] * v.scale + v.tx, y = e[1] * v.scale + v.ty - 2;
      var name = className(k);
      ctx.strokeText(name, x, y);  // canvas text is never markup
      ctx.fillStyle = item.colour;
      ctx.fillText(name, x, y);
    });
  }

  function pairedWithSelected(item, d) {
    var sel = S.selected;
    if (!sel || !d.gt) return false;
    if (sel.layer === "set" && item.layer === "gt") return d.sets[sel.s].pg && d.sets[sel.s].pg[sel.i] === item.i;
    if (sel.layer === "gt" && item.layer === "set") return d.sets[item.s].m && d.sets[item.s].m[sel.i] === item.i;
    return false;
  }

  function captions() {
    var i = S.current, names = S.index.frames.name, sets = S.index.sets;
    var mean = stat("mean", i), tail = mean == null ? "" : "  ·  mean IoU " + fmt(mean, 3);
    if (side()) {
      $("caption-0").textContent = names[i] + "  ·  " + sets[0];
      $("caption-1").textContent = names[i] + "  ·  " + sets[1];
    } else {
      $("caption-0").textContent = names[i] + (sets.length === 1 ? "" : "  ·  " + sets[S.statSet]) + tail;
    }
    var fs = frameSize(i), k = S.order.indexOf(i);
    $("status").textContent = "frame " + (k + 1) + " of " + S.order.length + " shown (" + frameCount() +
      " in all)  ·  " + Math.round(fs[0]) + " × " + Math.round(fs[1]) + " px  ·  zoom " + fmt(S.view.scale, 2) +
      (S.frames[i] ? "" : "  ·  loading");
  }

  // ---- picking and details ----------------------------------------------------------------------------
  function pick(v, x, y) {
    var view = S.view, ix = (x - view.tx) / view.scale, iy = (y - view.ty) / view.scale, best = null, bestArea = Infinity;
    S.drawn[v].forEach(function (item) {
      if (HV.contains(item.c, item.i, ix, iy)) {
        var a = HV.area(item.c, item.i) + (item.layer === "set" ? 0 : 1e-6);  // a prediction wins a tie
        if (a < bestArea) { best = item; bestArea = a; }
      }
    });
    if (!best) {
      var near = 6 / view.scale;
      S.drawn[v].forEach(function (item) {
        var dist = HV.edgeDistance(item.c, item.i, ix, iy);
        if (dist < near) { best = item; near = dist; }
      });
    }
    S.selected = best ? { layer: best.layer, s: best.s, i: best.i } : null;
    draw();
    details();
  }

  function where(side, j) {
    var file = side.f == null ? "(no file)" : side.f;
    return side.l ? file + ":" + side.l[j] : file;
  }

  function details() {
    var box = $("details"), sel = S.selected, d = S.frames[S.current], sets = S.index.sets;
    box.textContent = "";
    if (!sel || !d) {
      box.appendChild(el("span", "hint", "Click a box to see its pair, IoU, angle error, confidence and file:line."));
      return;
    }
    function line(text, cls) { box.appendChild(el("div", cls || "line", text)); }
    if (sel.layer === "set") {
      var p = d.sets[sel.s];
      line("prediction " + (sel.i + 1) + " of " + sets[sel.s], "line title");
      line("class: " + className(p.k[sel.i]) + " (" + p.k[sel.i] + ")");
      line("confidence: " + (p.s ? fmt(p.s[sel.i], 3) : "none"));
      line("file: " + where(p, sel.i));
      if (p.pg) {
        var g = p.pg[sel.i];
        if (g >= 0) {
          line("IoU: " + fmt(p.iou[g], 3) + "   angle error: " + fmt(p.ang[g], 1) + "°");
          line("pair: ground-truth box " + (g + 1) + ", " + className(d.gt.k[g]) + ", " + where(d.gt, g));
        } else {
          line("unmatched: no ground-truth box chose this prediction");
        }
      }
    } else if (sel.layer === "gt") {
      line("ground-truth box " + (sel.i + 1), "line title");
      line("class: " + className(d.gt.k[sel.i]) + " (" + d.gt.k[sel.i] + ")");
      line("file: " + where(d.gt, sel.i));
      d.sets.forEach(function (q, s) {
        var m = q.m ? q.m[sel.i] : -1;
        if (m >= 0) {
          line(sets[s] + ": IoU " + fmt(q.iou[sel.i], 3) + "   angle error " + fmt(q.ang[sel.i], 1) + "°   pair: prediction " +
               (m + 1) + ", " + className(q.k[m]) + (q.s ? ", confidence " + fmt(q.s[m], 3) : "") + ", " + where(q, m));
        } else {
          line(sets[s] + ": missed (no prediction matched)");
        }
      });
    } else {
      line("HBB prompt " + (sel.i + 1), "line title");
      line("class: " + className(d.hbb.k[sel.i]) + " (" + d.hbb.k[sel.i] + ")");
      line("file: " + where(d.hbb, sel.i));
    }
  }

  // ---- legend ------------------------------------------------------------------------------------------
  function legend() {
    var box = $("legend"), idx = S.index;
    box.textContent = "";
    function entry(colour, style, text) {
      var row = el("div", "entry"), swatch = el("span", "swatch");
      swatch.style.borderTopColor = colour;
      swatch.style.borderTopStyle = style;
      row.appendChild(swatch);
      row.appendChild(el("span", null, text));
      box.appendChild(row);
    }
    function ramp(stops, low, high, text) {
      var row = el("div", "entry"), bar = el("span", "ramp");
      bar.style.background = HV.gradient(stops);
      row.appendChild(el("span", null, low));
      row.appendChild(bar);
      row.appendChild(el("span", null, high + "  " + text));
      box.appendChild(row);
    }
    if (S.colour === "iou" && idx.hasGt) ramp(HV.PLASMA, "≤" + HV.IOU_LOW, "1", "IoU of matched prediction");
    if (S.colour === "conf") {
      if (idx.confRange) ramp(HV.VIRIDIS, fmt(idx.confRange[0], 2), fmt(idx.confRange[1], 2), "confidence");
      else box.appendChild(el("div", "hint", "no set carries a confidence"));
    }
    if (S.colour === "class") {
      var d = S.frames[S.current], present = {};
      var f = S.index.frames.cls[S.current] || [];
      f.forEach(function (k) { present[k] = true; });
      if (d) d.sets.forEach(function (q) { q.k.forEach(function (k) { present[k] = true; }); });
      Object.keys(present).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
        entry(HV.classColour(k), "solid", className(k) + " (" + k + ")");
      });
    }
    if (idx.hasGt && S.colour !== "class") entry(HV.STYLE.gt, "solid", "ground truth");
    if (idx.hasGt) {
      entry(HV.STYLE.unmatchedGt, "dashed", "ground truth no prediction matched");
      entry(S.colour === "iou" ? HV.STYLE.unmatchedPred : "#bbbbbb", "dotted", "prediction no ground truth chose");
    }
    if (idx.hasHbb) entry(HV.STYLE.prompt, "dashed", "HBB prompt");
    if (!idx.hasGt && S.colour === "iou") {
      idx.sets.forEach(function (name, s) { entry(HV.STYLE.sets[s % 5], "solid", name); });
    }
    if (idx.sets.length > 1 && !side()) {
      idx.sets.forEach(function (name, s) { if (s > 0) entry("#bbbbbb", "dashed", name + ": long dashes"); });
    }
  }

  api.showFrame = showFrame;
  api.gotoWorst = gotoWorst;
  api.toScreen = function (x, y) { return [x * S.view.scale + S.view.tx, y * S.view.scale + S.view.ty]; };
  loadScript("data/index.js", function () {
    $("status").textContent = "cannot load data/index.js: the page's data is missing";
  });
})();
