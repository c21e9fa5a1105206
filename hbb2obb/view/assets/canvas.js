// hbb2obb-view: colours and box geometry for the page's canvas (plain JavaScript, no library).
"use strict";

var HV = (function () {
  // The IoU colours of hbb2obb's overlays: plasma without its dark third (0.5 to 1.0), over IoU 0.5 to 1.
  var PLASMA = ["#cc4778", "#da5a6a", "#e66c5c", "#f0804e", "#f89540", "#fdac33", "#fdc527", "#f8df25", "#f0f921"];
  // Confidence: viridis without its darkest quarter, readable on asphalt.
  var VIRIDIS = ["#3b528b", "#2f6b8e", "#26828e", "#1f988b", "#28ae80", "#4ec36b", "#84d44b", "#c2df23", "#fde725"];
  var TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
               "#17becf"];
  var STYLE = {
    gt: "#ffffff", unmatchedGt: "#56b4e9", unmatchedPred: "#3ddc97", prompt: "#c8c8c8",
    selected: "#ffffff", pair: "#00e5ff",
    sets: ["#ffb000", "#ff5ccd", "#8fd3ff", "#b0ff57", "#ff8a65"]
  };
  var IOU_LOW = 0.5;

  function rgb(hex) {
    return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
  }

  function ramp(stops, t) {
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    var x = t * (stops.length - 1), i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
    var a = rgb(stops[i]), b = rgb(stops[i + 1]);
    return "rgb(" + Math.round(a[0] + (b[0] - a[0]) * f) + "," + Math.round(a[1] + (b[1] - a[1]) * f) + "," +
      Math.round(a[2] + (b[2] - a[2]) * f) + ")";
  }

  function iouColour(iou) { return ramp(PLASMA, (iou - IOU_LOW) / (1 - IOU_LOW)); }

  function confColour(score, low, high) {
    return ramp(VIRIDIS, high > low ? (score - low) / (high - low) : 1);
  }

  function classColour(k) { return TAB10[((k % 10) + 10) % 10]; }

  function gradient(stops) { return "linear-gradient(to right, " + stops.join(", ") + ")"; }

  // Boxes are flat arrays of 8 numbers each: x1 y1 ... x4 y4, in the frame's image pixels.
  function path(ctx, c, i) {
    var o = 8 * i;
    ctx.moveTo(c[o], c[o + 1]);
    ctx.lineTo(c[o + 2], c[o + 3]);
    ctx.lineTo(c[o + 4], c[o + 5]);
    ctx.lineTo(c[o + 6], c[o + 7]);
    ctx.closePath();
  }

  function contains(c, i, x, y) {
    var o = 8 * i, inside = false;
    for (var a = 0, b = 3; a < 4; b = a++) {
      var xa = c[o + 2 * a], ya = c[o + 2 * a + 1], xb = c[o + 2 * b], yb = c[o + 2 * b + 1];
      if ((ya > y) !== (yb > y) && x < (xb - xa) * (y - ya) / (yb - ya) + xa) inside = !inside;
    }
    return inside;
  }

  function area(c, i) {
    var o = 8 * i, s = 0;
    for (var a = 0; a < 4; a++) {
      var b = (a + 1) % 4;
      s += c[o + 2 * a] * c[o + 2 * b + 1] - c[o + 2 * b] * c[o + 2 * a + 1];
    }
    return Math.abs(s) / 2;
  }

  function edgeDistance(c, i, x, y) {
    var o = 8 * i, best = Infinity;
    for (var a = 0; a < 4; a++) {
      var b = (a + 1) % 4, xa = c[o + 2 * a], ya = c[o + 2 * a + 1], dx = c[o + 2 * b] - xa, dy = c[o + 2 * b + 1] - ya;
      var len = dx * dx + dy * dy, t = len > 0 ? ((x - xa) * dx + (y - ya) * dy) / len : 0;
      t = Math.max(0, Math.min(1, t));
      var ex = xa + t * dx - x, ey = ya + t * dy - y;
      best = Math.min(best, Math.sqrt(ex * ex + ey * ey));
    }
    return best;
  }

  function centre(c, i) {
    var o = 8 * i;
    return [(c[o] + c[o + 2] + c[o + 4] + c[o + 6]) / 4, (c[o + 1] + c[o + 3] + c[o + 5] + c[o + 7]) / 4];
  }

  function extent(c, i) {
    var o = 8 * i, x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (var a = 0; a < 4; a++) {
      x0 = Math.min(x0, c[o + 2 * a]); x1 = Math.max(x1, c[o + 2 * a]);
      y0 = Math.min(y0, c[o + 2 * a + 1]); y1 = Math.max(y1, c[o + 2 * a + 1]);
    }
    return [x0, y0, x1, y1];
  }

  return {
    PLASMA: PLASMA, VIRIDIS: VIRIDIS, STYLE: STYLE, IOU_LOW: IOU_LOW, iouColour: iouColour,
    confColour: confColour, classColour: classColour, gradient: gradient, path: path, contains: contains,
    area: area, edgeDistance: edgeDistance, centre: centre, extent: extent
  };
})();
