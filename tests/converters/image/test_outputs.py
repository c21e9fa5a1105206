"""What ``hbb2obb`` writes beside the OBBs: confidences, polygons, normalized coordinates.

Ported in spirit from the reference tool's tests of its conversion writers (1.12.0,
``tests/test_converter.py``: resolve_confidences, save_polygon_annotations, normalized output).
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw
from shapely.geometry import Polygon

from hbb2obb.converters.image.converter import convert_boxes
from hbb2obb.converters.image.outputs import (
    OutputSettings,
    check_epsilon,
    check_precision,
    coordinate_text,
    detector_scores,
    label_text,
    lossy_precision_warning,
    polygons,
    resolve_confidences,
    sufficient_precision,
)
from hbb2obb.errors import UsageError
from hbb2obb.io import read_yolo_hbb
from hbb2obb.io.yolo_obb import write_yolo_obb

CONVERSION = [0.9, 0.5]
DETECTOR = np.array([0.8, 0.4])


def test_the_conversion_source_reports_the_conversion_scores():
    scores, missing = resolve_confidences(CONVERSION, DETECTOR, "conversion")
    np.testing.assert_array_equal(scores, CONVERSION)
    assert missing == 0


def test_the_detector_and_combined_sources():
    np.testing.assert_allclose(resolve_confidences(CONVERSION, DETECTOR, "detector")[0], [0.8, 0.4])
    np.testing.assert_allclose(resolve_confidences(CONVERSION, DETECTOR, "combined")[0], [0.72, 0.2])


def test_a_box_without_a_detector_score_reports_the_conversion_score():
    detector = np.array([0.8, np.nan])
    scores, missing = resolve_confidences(CONVERSION, detector, "detector")
    np.testing.assert_allclose(scores, [0.8, 0.5])
    assert missing == 1
    np.testing.assert_allclose(resolve_confidences(CONVERSION, detector, "combined")[0], [0.72, 0.5])
    everything_missing, count = resolve_confidences(CONVERSION, [np.nan, np.nan], "detector")
    np.testing.assert_allclose(everything_missing, CONVERSION)
    assert count == 2


def test_an_unknown_source_and_a_length_mismatch_are_refused():
    with pytest.raises(UsageError):
        resolve_confidences(CONVERSION, DETECTOR, "detector_only")
    with pytest.raises(ValueError):
        resolve_confidences(CONVERSION, [0.8], "detector")


def test_detector_scores_read_the_sixth_column_line_by_line(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("0 100 50 40 20 0.87\n1 20 20 10 10\nbroken line\n2 30 30 4 4 1.5\n3 40 40 4 4 0.25\n")
    label_file = read_yolo_hbb(path, strict=False)
    scores, problems = detector_scores(label_file)
    assert scores[0] == pytest.approx(0.87) and np.isnan(scores[1]) and np.isnan(scores[2])
    assert scores[3] == pytest.approx(0.25)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:4:")


@pytest.mark.parametrize("precision, normalize", [(-1, True), (0, True), (18, True)])
def test_an_unusable_precision_is_refused(precision, normalize):
    with pytest.raises(UsageError, match="--precision must be between 1 and 17"):
        check_precision(precision, normalize)


def test_precision_without_normalize_is_refused():
    with pytest.raises(UsageError, match="--precision applies to normalized output"):
        check_precision(6, False)
    assert check_precision(None, False) == 10


def test_a_precision_that_cannot_round_trip_is_flagged():
    message = lossy_precision_warning(3, (3840, 2160))
    assert "3840x2160" in message and "Use 6 or more" in message
    assert lossy_precision_warning(6, (3840, 2160)) is None
    # the bar: half a unit of the last decimal, times the long side, below half a hundredth of a pixel
    for size in [(640, 480), (3840, 2160), (20000, 10)]:
        needed = sufficient_precision(size)
        assert 0.5 * 10.0 ** -needed * max(size) < 0.005 <= 0.5 * 10.0 ** -(needed - 1) * max(size)


@pytest.mark.parametrize("epsilon", [-0.1, 1.0, float("nan")])
def test_an_unusable_epsilon_is_refused(epsilon):
    with pytest.raises(UsageError, match="--polygon_epsilon"):
        check_epsilon(epsilon)


def test_normalized_coordinates_divide_x_by_the_width_and_y_by_the_height():
    settings = OutputSettings(normalize=True, precision=10)
    values = [float(v) for v in coordinate_text([[100, 200], [300, 400.5]], settings, (3840, 2160)).split()]
    np.testing.assert_allclose(values, [100 / 3840, 200 / 2160, 300 / 3840, 400.5 / 2160], atol=1e-10)
    assert coordinate_text([[1920, 0]], settings, (3840, 2160)) == "0.5 0"  # trailing zeros dropped
    with pytest.raises(ValueError):
        coordinate_text([[1, 2]], settings, None)


def test_default_lines_are_what_the_converter_always_wrote(tmp_path):
    corners = np.array([[[10.04, 20.0], [30.0, 20.0], [30.0, 40.0], [10.0, 40.0]]])
    from hbb2obb.boxes import Boxes

    write_yolo_obb(tmp_path / "old.txt", Boxes(corners=corners, class_id=np.array([3])), decimals=1)
    assert label_text([3], list(corners), OutputSettings()) == (tmp_path / "old.txt").read_text()
    assert label_text([3], list(corners), OutputSettings(), confidences=[0.12345]).endswith(" 0.1235\n")


@pytest.fixture(scope="module")
def frame():
    """A rotated bright car on grey, and a second box over bare road (a fallback)."""
    image = Image.new("RGB", (240, 160), (90, 90, 90))
    ImageDraw.Draw(image).polygon([(30, 50), (80, 20), (95, 45), (45, 75)], fill=(235, 235, 235))
    xyxy = [[30, 20, 95, 75], [150, 100, 200, 140]]
    return image, xyxy, convert_boxes(image, xyxy, keep_masks=True)


def test_the_mask_polygon_lies_on_the_object_and_a_fallback_is_its_obb(frame):
    image, xyxy, conversion = frame
    assert not conversion.fallback[0] and conversion.fallback[1]
    shapes = polygons(conversion)
    assert len(shapes) == 2
    car = Polygon([(30, 50), (80, 20), (95, 45), (45, 75)])
    outline = Polygon(shapes[0])
    assert len(shapes[0]) > 4 and outline.is_valid
    assert outline.intersection(car).area / outline.union(car).area > 0.8
    np.testing.assert_array_equal(shapes[1], conversion.corners[1])


def test_polygon_lines_are_row_aligned_with_the_obb_lines(frame):
    _, _, conversion = frame
    settings = OutputSettings(normalize=True, precision=8)
    scores = [0.7, 0.0]
    obb = label_text([4, 9], list(conversion.corners), settings, (240, 160), scores).splitlines()
    poly = label_text([4, 9], polygons(conversion), settings, (240, 160), scores).splitlines()
    assert [line.split()[0] for line in poly] == ["4", "9"] == [line.split()[0] for line in obb]
    assert [line.split()[-1] for line in poly] == [line.split()[-1] for line in obb]
    assert poly[1] == obb[1]  # the fallback: its OBB's four corners, to the digit
    assert all(0 <= float(v) <= 1 for v in poly[0].split()[1:-1])


def test_simplifying_drops_vertices_but_keeps_a_polygon(frame):
    _, _, conversion = frame
    raw, simplified = polygons(conversion)[0], polygons(conversion, 0.05)[0]
    assert 3 <= len(simplified) < len(raw)
    assert Polygon(simplified).area == pytest.approx(Polygon(raw).area, rel=0.2)


def test_keeping_the_masks_does_not_move_a_box(frame):
    image, xyxy, conversion = frame
    np.testing.assert_array_equal(convert_boxes(image, xyxy).corners, conversion.corners)
