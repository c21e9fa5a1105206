"""The review page driven in a real headless browser: the system's Chromium through selenium and chromedriver.

One browser for the module. Every check of a drawing compares the screenshot's pixels with what
the data says is drawn where: a box's edge, put on the screen by the page's own view transform,
must carry the colour its IoU (matplotlib's colormap, the overlays' colours) or its style gives.
Skips, with the reason, where Chromium, chromedriver or selenium is missing (``.ci/run`` installs them).
"""

from __future__ import annotations

import io
import shutil
import time

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from hbb2obb.boxes import Boxes
from hbb2obb.cli.view import main
from hbb2obb.plotting.overlay import IOU_CMAP, IOU_RANGE
from hbb2obb.view.model import LabelSetView, Layer, Matching, ViewData
from hbb2obb.view.page import write_page

from .conftest import EVIL, GREY, IOU_G0, IOU_G1, write_view_dataset

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                                reason="no Chromium or chromedriver on PATH (apt-get install chromium-driver)")
EVIL_SET = "<script>alert(2)</script>"
WHITE, UNMATCHED_GT, UNMATCHED_PRED = (255, 255, 255), (0x56, 0xB4, 0xE9), (0x3D, 0xDC, 0x97)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,860", "--force-device-scale-factor=1", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = write_view_dataset(tmp_path_factory.mktemp("view") / "dataset")
    out = root.parent / "page"
    result = CliRunner().invoke(main, [str(root / "images"), str(root / "set_a"), str(root / "set_b"), "-gt",
                                       str(root / "gt"), "-mp", str(root / "classes.yaml"), "--names", "A", EVIL_SET,
                                       "-o", str(out), "--max_side", "256", "-nb"])
    assert result.exit_code == 0, result.output
    return out


def open_page(driver, path):
    driver.get(path.as_uri())
    wait(driver, "return document.body.getAttribute('data-ready') === '1'")


def wait(driver, script, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for: {script}")


def settle(driver):
    """Wait until the page has drawn after the last action (two animation frames)."""
    driver.execute_async_script("var done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(done));")


def screenshot(driver) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB"))


def screen_point(driver, x, y, view=0):
    """Where image pixel (x, y) of the frame is in the screenshot, by the page's own transform."""
    return driver.execute_script(
        "var r = document.getElementById('canvas-' + arguments[2]).getBoundingClientRect();"
        "var p = window.hbb2obb.toScreen(arguments[0], arguments[1]); return [r.left + p[0], r.top + p[1]];",
        x, y, view)


def nearest(pixels, point, colour, reach=4) -> float:
    """Smallest RGB distance to ``colour`` in a square of ``2 reach + 1`` pixels around ``point``."""
    x, y = int(round(point[0])), int(round(point[1]))
    region = pixels[y - reach:y + reach + 1, x - reach:x + reach + 1].reshape(-1, 3).astype(float)
    return float(np.linalg.norm(region - np.asarray(colour, float), axis=1).min())


def along(pixels, start, stop, colour, steps=9) -> float:
    """The best match of ``colour`` along a segment (dashed lines have gaps)."""
    return min(nearest(pixels, np.add(start, np.subtract(stop, start) * t), colour, 2)
               for t in np.linspace(0.3, 0.7, steps))


def iou_colour(iou):
    low, high = IOU_RANGE
    return np.array(IOU_CMAP(np.clip((iou - low) / (high - low), 0, 1))[:3]) * 255


def fresh(driver, page):
    open_page(driver, page / "index.html")
    settle(driver)


def test_loads_lists_frames_and_draws_boxes_where_the_data_says(browser, page):
    fresh(browser, page)
    rows = browser.execute_script("return Array.from(document.querySelectorAll('#list .row'), "
                                  "r => Array.from(r.children, c => c.textContent))")
    assert [row[0] for row in rows] == ["a", "b", "c"]
    assert rows[0][1] == f"{(IOU_G0 + IOU_G1) / 2:.3f}" and rows[0][2:4] == ["1", "1"]
    assert rows[0][4] == "0.30–0.90"
    assert browser.execute_script("return document.body.getAttribute('data-frame')") == "0"
    pixels = screenshot(browser)
    # set B's exact copy of g0 (IoU 1) lies over g0's edge, in long dashes
    assert along(pixels, screen_point(browser, 100, 130), screen_point(browser, 100, 170), iou_colour(1.0)) < 30
    browser.find_element("tag name", "body").send_keys("2")  # set B off
    settle(browser)
    pixels = screenshot(browser)
    # p0 (IoU 0.905) right edge, p1 (IoU 0.538) right edge; g0 left edge white; g2 missed; p2 chosen by nobody
    assert nearest(pixels, screen_point(browser, 310, 150), iou_colour(IOU_G0)) < 30
    assert nearest(pixels, screen_point(browser, 760, 150), iou_colour(IOU_G1)) < 30
    assert nearest(pixels, screen_point(browser, 100, 150), WHITE) < 30
    assert along(pixels, screen_point(browser, 100, 360), screen_point(browser, 100, 400), UNMATCHED_GT) < 40
    assert along(pixels, screen_point(browser, 700, 360), screen_point(browser, 700, 400), UNMATCHED_PRED) < 40
    # inside a box: the frame's own pixels
    assert nearest(pixels, screen_point(browser, 200, 250), GREY, 0) < 12
    assert browser.get_log("browser") == []  # no script error, no refused resource


def test_toggle_layers(browser, page):
    fresh(browser, page)
    browser.find_element("id", "layer-set-1").click()  # set B off: its exact copy of g0 would cover g0
    settle(browser)
    point = screen_point(browser, 100, 150)
    assert nearest(screenshot(browser), point, WHITE) < 30
    browser.find_element("tag name", "body").send_keys("g")  # ground truth off
    settle(browser)
    assert not browser.find_element("id", "layer-gt").is_selected()
    assert nearest(screenshot(browser), point, WHITE) > 100
    browser.find_element("id", "layer-gt").click()
    browser.find_element("id", "layer-set-0").click()  # set A off: p0's edge is gone, g0's stays
    settle(browser)
    pixels = screenshot(browser)
    assert nearest(pixels, point, WHITE) < 30
    assert nearest(pixels, screen_point(browser, 310, 150), iou_colour(IOU_G0)) > 60
    browser.find_element("id", "layer-set-0").click()
    browser.find_element("id", "layer-unmatched").click()  # unmatched boxes off
    settle(browser)
    pixels = screenshot(browser)
    assert along(pixels, screen_point(browser, 700, 360), screen_point(browser, 700, 400), UNMATCHED_PRED) > 60
    assert nearest(pixels, screen_point(browser, 310, 150), iou_colour(IOU_G0)) < 30


def test_pan_by_drag_moves_the_boxes(browser, page):
    from selenium.webdriver import ActionChains

    fresh(browser, page)
    before = browser.execute_script("return Object.assign({}, window.hbb2obb.state.view)")
    canvas = browser.find_element("id", "canvas-0")
    ActionChains(browser).move_to_element_with_offset(canvas, 10, 10).click_and_hold().move_by_offset(
        40, 25).move_by_offset(20, 5).release().perform()
    settle(browser)
    after = browser.execute_script("return window.hbb2obb.state.view")
    assert after["tx"] - before["tx"] == pytest.approx(60, abs=1)
    assert after["ty"] - before["ty"] == pytest.approx(30, abs=1)
    assert nearest(screenshot(browser), screen_point(browser, 310, 150), iou_colour(IOU_G0)) < 30
    assert browser.execute_script("return window.hbb2obb.state.selected") is None  # a drag is no click


def test_zoom_by_wheel_and_keys_keeps_the_point_under_the_cursor(browser, page):
    from selenium.webdriver import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    fresh(browser, page)
    canvas = browser.find_element("id", "canvas-0")
    scale = browser.execute_script("return window.hbb2obb.state.view.scale")
    target = screen_point(browser, 300, 200)
    rect = browser.execute_script("return document.getElementById('canvas-0').getBoundingClientRect()")
    offset = (int(target[0] - rect["x"] - rect["width"] / 2), int(target[1] - rect["y"] - rect["height"] / 2))
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(canvas, *offset), 0, -300).perform()
    wait(browser, f"return window.hbb2obb.state.view.scale > {scale * 1.2}")
    settle(browser)
    zoomed = browser.execute_script("return window.hbb2obb.state.view.scale")
    moved = screen_point(browser, 300, 200)
    assert abs(moved[0] - (rect["x"] + rect["width"] / 2 + offset[0])) < 1.5
    browser.find_element("tag name", "body").send_keys("+")
    assert browser.execute_script("return window.hbb2obb.state.view.scale") == pytest.approx(zoomed * 1.25)
    browser.find_element("tag name", "body").send_keys("0")  # fit again
    assert browser.execute_script("return window.hbb2obb.state.view.scale") == pytest.approx(scale)


def test_zooming_in_switches_to_the_full_resolution_frame(browser, page):
    fresh(browser, page)
    canvas = browser.find_element("id", "canvas-0")
    body = browser.find_element("tag name", "body")
    for _ in range(6):  # zoomed out, the 256-pixel frame is sharp enough
        body.send_keys("-")
    assert canvas.get_attribute("data-resolution") == "downscaled"
    for _ in range(10):
        body.send_keys("+")
    wait(browser, "return document.getElementById('canvas-0').getAttribute('data-resolution') === 'full'")


def test_click_a_box_shows_its_pair_iou_angle_confidence_and_file_line(browser, page):
    fresh(browser, page)
    x, y = screen_point(browser, 660, 150)  # inside p1 and g1 (equal areas): the prediction is picked
    rect = browser.execute_script("return document.getElementById('canvas-0').getBoundingClientRect()")
    from selenium.webdriver import ActionChains

    canvas = browser.find_element("id", "canvas-0")
    ActionChains(browser).move_to_element_with_offset(canvas, int(x - rect["x"] - rect["width"] / 2),
                                                      int(y - rect["y"] - rect["height"] / 2)).click().perform()
    settle(browser)
    lines = browser.execute_script("return Array.from(document.querySelectorAll('#details div'), d => d.textContent)")
    assert lines[0] == "prediction 2 of A"
    assert lines[1] == f"class: {EVIL} (1)"
    assert lines[2] == "confidence: 0.600"
    assert lines[3].startswith("file: ") and lines[3].endswith("set_a/a.txt:2")
    assert lines[4] == f"IoU: {IOU_G1:.3f}   angle error: 0.0°"
    assert lines[5].startswith(f"pair: ground-truth box 2, {EVIL}, ") and lines[5].endswith("gt/a.txt:2")
    # the selection is drawn: white over the prediction, its pair in cyan
    pixels = screenshot(browser)
    assert nearest(pixels, screen_point(browser, 760, 150), WHITE) < 30
    assert nearest(pixels, screen_point(browser, 500, 150), (0, 0xE5, 0xFF)) < 40


def test_the_escaping_case_shows_names_as_text(browser, page):
    from selenium.common.exceptions import NoAlertPresentException

    fresh(browser, page)
    options = browser.execute_script(
        "return Array.from(document.querySelectorAll('#f-class option'), o => o.textContent)")
    assert f"{EVIL} (1)" in options
    labels = browser.execute_script("return document.getElementById('set-layers').textContent")
    assert EVIL_SET in labels
    assert browser.execute_script("return document.querySelectorAll('img, #set-layers script').length") == 0
    browser.find_element("id", "colour").send_keys("class")  # the legend lists class names
    browser.find_element("id", "layer-labels").click()  # and the canvas draws them
    settle(browser)
    assert EVIL in browser.find_element("id", "legend").text
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is the check
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0


def test_switch_frames_by_keys_and_list(browser, page):
    fresh(browser, page)
    body = browser.find_element("tag name", "body")
    body.send_keys("n")
    wait(browser, "return document.body.getAttribute('data-frame') === '1'")
    body.send_keys("p")
    wait(browser, "return document.body.getAttribute('data-frame') === '0'")
    browser.find_element("css selector", "#list .row[data-frame='2']").click()
    wait(browser, "return document.body.getAttribute('data-frame') === '2' && window.hbb2obb.state.frames[2]")
    settle(browser)
    # frame c has no image: its boxes on a plain ground; A's box (12, 10, 50, 50) by its IoU
    assert nearest(screenshot(browser), screen_point(browser, 62, 35), iou_colour(48 / 52)) < 30
    # sorting by mean IoU puts the worst frame first; the filter keeps frames of a class
    browser.find_element("css selector", "#list-head button[data-key=mean]").click()
    assert browser.execute_script("return window.hbb2obb.state.order") == [0, 2, 1]
    browser.find_element("id", "f-class").send_keys(f"{EVIL} (1)")
    assert browser.execute_script("return window.hbb2obb.state.order") == [0, 2]
    browser.find_element("id", "f-iou-max").send_keys("0.8")
    assert browser.execute_script("return window.hbb2obb.state.order") == [0]


def test_worst_boxes_jump_list(browser, page):
    fresh(browser, page)
    items = browser.execute_script("return Array.from(document.querySelectorAll('#worst .item'), i => i.textContent)")
    assert items[0].startswith(f"IoU {IOU_G1:.3f}  a")
    browser.find_element("tag name", "body").send_keys("]")
    settle(browser)
    assert browser.execute_script("return window.hbb2obb.state.selected") == {"layer": "gt", "s": -1, "i": 1}
    assert "ground-truth box 2" in browser.find_element("id", "details").text


def test_two_sets_side_by_side(browser, page):
    fresh(browser, page)
    browser.find_element("tag name", "body").send_keys("s")
    settle(browser)
    assert browser.execute_script("return document.getElementById('canvas-1').clientWidth") > 100
    pixels = screenshot(browser)
    # left: set A's p0 by its IoU; right: set B's exact match of g0, IoU 1
    assert nearest(pixels, screen_point(browser, 310, 150, 0), iou_colour(IOU_G0)) < 30
    assert nearest(pixels, screen_point(browser, 300, 150, 1), iou_colour(1.0)) < 30
    assert nearest(pixels, screen_point(browser, 310, 150, 1), iou_colour(IOU_G0)) > 60
    assert EVIL_SET in browser.find_element("id", "caption-1").text


def big_view(n_frames=5000, n_boxes=150_000, seed=0) -> ViewData:
    """A page of 5,000 frames and 300,000 boxes (ground truth and one matched set)."""
    rng = np.random.default_rng(seed)
    frame = np.sort(rng.integers(0, n_frames, n_boxes))
    corners = rng.uniform(0, 3800, (n_boxes, 1, 2)) + np.array([[0, 0], [30, 0], [30, 15], [0, 15]])
    files = tuple(f"labels/frame_{i:05d}.txt" for i in range(n_frames))
    gt = Layer(Boxes(corners, rng.integers(0, 4, n_boxes), line=np.arange(n_boxes) + 1), frame, files)
    pred = Layer(Boxes(corners + 1.5, rng.integers(0, 4, n_boxes), score=rng.random(n_boxes),
                       line=np.arange(n_boxes) + 1), frame, files)
    iou = rng.uniform(0.3, 1, n_boxes)
    rows = np.arange(n_boxes)
    matching = Matching(rows, iou, rng.uniform(0, 20, n_boxes), rows, iou)
    return ViewData(tuple(f"frame_{i:05d}" for i in range(n_frames)), np.full((n_frames, 2), [3840.0, 2160.0]),
                    (LabelSetView("pred", pred, matching),), gt)


def test_five_thousand_frames_open_in_under_three_seconds(browser, tmp_path):
    write_page(big_view(), tmp_path / "big", {})
    start = time.monotonic()
    open_page(browser, tmp_path / "big" / "index.html")
    timings = browser.execute_script("return window.hbb2obb.timings")
    assert time.monotonic() - start < 3.0 and timings["firstFrame"] < 3000
    start = time.monotonic()
    browser.find_element("css selector", "#list-head button[data-key=mean]").click()
    browser.find_element("tag name", "body").send_keys("n")
    wait(browser, "return window.hbb2obb.state.frames[window.hbb2obb.state.current]")
    assert time.monotonic() - start < 1.0  # sorting 5,000 frames and showing another stays responsive
    assert browser.execute_script("return document.querySelectorAll('#list .row').length") < 100  # a screenful
