"""Label readers: formats, encodings, and the bad-input rule (docs/metrics.md §1)."""

import numpy as np
import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io import (
    ImageSizes,
    load_label_map,
    read_dota,
    read_obb_labels,
    read_yolo_hbb,
    read_yolo_obb,
    scale_to_pixels,
    write_yolo_obb,
)
from hbb2obb.io.text import LabelFile

from oracles import yolo_obb_rule

GOOD = "0 10 20 30 20 30 40 10 40\n"


@pytest.mark.parametrize(
    "content, expected_boxes",
    [
        ("", 0),
        ("\n\n  \n", 0),
        (GOOD, 1),
        (GOOD + "\n" + GOOD, 2),
        (GOOD.replace("\n", "\r\n") * 2, 2),
        (GOOD.replace("\n", "\r") * 3, 3),
        ("\ufeff" + GOOD, 1),
        ("1 10 20 30 20 30 40 10 40 0.87\n", 1),
    ],
    ids=["empty", "blank-lines", "one", "blank-between", "crlf", "cr", "bom", "confidence"],
)
def test_yolo_obb_reads_clean_files(tmp_path, content, expected_boxes):
    path = tmp_path / "f.txt"
    path.write_bytes(content.encode("utf-8"))
    parsed = read_yolo_obb(path, strict=True)
    assert len(parsed.boxes) == expected_boxes
    assert parsed.problems == ()
    if expected_boxes:
        assert parsed.boxes.corners[0].tolist() == [[10, 20], [30, 20], [30, 40], [10, 40]]
        assert parsed.normalized is False


def test_yolo_obb_keeps_line_numbers_and_confidence(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("\n2 0 0 1 0 1 1 0 1 0.5\n\n3 0 0 2 0 2 2 0 2 0.25\n")
    boxes = read_yolo_obb(path, strict=True).boxes
    assert boxes.line.tolist() == [2, 4]
    assert boxes.class_id.tolist() == [2, 3]
    assert boxes.score.tolist() == [0.5, 0.25]


@pytest.mark.parametrize(
    "line, reason",
    [
        ("0 1 2 3 4 5 6 7", "found 8"),
        ("0 1 2 3 4 5 6 7 8 9 10", "found 11"),
        ("car 1 2 3 4 5 6 7 8", "class id is not an integer: 'car'"),
        ("1.5 1 2 3 4 5 6 7 8", "class id is not an integer: '1.5'"),
        ("0 1 2 3 nan 5 6 7 8", "field 5 is not finite: 'nan'"),
        ("0 1 2 3 4 5 inf 7 8", "field 7 is not finite: 'inf'"),
        ("0 1 2 x 4 5 6 7 8", "field 4 is not a number: 'x'"),
        ("0 1 2 3 4 5 6 7 8 high", "confidence is not a number: 'high'"),
    ],
)
def test_broken_line_is_an_error_in_ground_truth(tmp_path, line, reason):
    path = tmp_path / "gt.txt"
    path.write_text(GOOD + line + "\n")
    with pytest.raises(LabelFormatError) as info:
        read_yolo_obb(path, strict=True)
    assert info.value.line == 2
    assert str(info.value) == f"{path}:2: " + str(info.value.reason)
    assert reason in info.value.reason


def test_broken_prediction_lines_are_skipped_and_listed(tmp_path):
    path = tmp_path / "pred.txt"
    path.write_text(GOOD + "0 1 2\n" + GOOD + "car 1 2 3 4 5 6 7 8\n")
    parsed = read_yolo_obb(path, strict=False)
    assert len(parsed.boxes) == 2
    assert parsed.boxes.line.tolist() == [1, 3]
    assert [p.line for p in parsed.problems] == [2, 4]


def test_normalized_files_are_recognized_and_scaled(tmp_path):
    path = tmp_path / "n.txt"
    path.write_text("0 0.25 0.5 0.75 0.5 0.75 1.0 0.25 1.0\n")
    parsed = read_yolo_obb(path, strict=True)
    assert parsed.normalized is True
    scaled = scale_to_pixels(parsed, 3840, 2160)
    assert scaled.normalized is False
    assert scaled.boxes.corners[0].tolist() == [[960, 1080], [2880, 1080], [2880, 2160], [960, 2160]]


def test_yolo_hbb_becomes_axis_aligned_corners(tmp_path):
    path = tmp_path / "h.txt"
    path.write_text("1 100 50 40 20\n0 10 10 2 2 0.9\n")
    parsed = read_yolo_hbb(path, strict=True)
    assert parsed.boxes.corners[0].tolist() == [[80, 40], [120, 40], [120, 60], [80, 60]]
    assert parsed.boxes.class_id.tolist() == [1, 0]
    assert parsed.boxes.score is None
    # some lines with a confidence: each line's kept apart, NaN where none (as the YOLO-OBB reader does)
    np.testing.assert_array_equal(parsed.line_scores, [np.nan, 0.9])
    path.write_text("1 100 50 40 20 0.5\n0 10 10 2 2 0.9\n")
    every = read_yolo_hbb(path, strict=True)
    assert every.boxes.score.tolist() == [0.5, 0.9] and every.line_scores is None
    path.write_text("1 100 50 40 20\n")
    assert read_yolo_hbb(path, strict=True).line_scores is None


@pytest.mark.parametrize("line, reason", [("0 1 2 3", "found 4"), ("0 1 2 -3 4", "negative"), ("x 1 2 3 4", "integer")])
def test_yolo_hbb_broken_lines(tmp_path, line, reason):
    path = tmp_path / "h.txt"
    path.write_text(line + "\n")
    with pytest.raises(LabelFormatError, match=reason):
        read_yolo_hbb(path, strict=True)
    assert len(read_yolo_hbb(path, strict=False).problems) == 1


def test_dota_with_label_map_and_headers(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("imagesource:GoogleEarth\ngsd:0.15\n1 2 5 2 5 6 1 6 car 0\n1 2 5 2 5 6 1 6 Bus 1\n")
    label_map = {0: "Car", 1: "Bus"}
    parsed = read_obb_labels(path, strict=True, label_map=label_map)
    assert parsed.boxes.class_id.tolist() == [0, 1]
    assert parsed.boxes.difficult.tolist() == [False, True]
    assert parsed.boxes.line.tolist() == [3, 4]


@pytest.mark.parametrize(
    "line, label_map, reason",
    [
        ("1 2 5 2 5 6 1 6 plane 0", {0: "Car"}, "not in the label map"),
        ("1 2 5 2 5 6 1 6 car 0", {}, "needs a label map"),
        ("1 2 5 2 5 6 1 6 car 2", {0: "Car"}, "difficult flag"),
        ("1 2 5 nan 5 6 1 6 car 0", {0: "Car"}, "not finite"),
    ],
)
def test_dota_broken_lines(tmp_path, line, label_map, reason):
    path = tmp_path / "d.dota"
    path.write_text(line + "\n")
    with pytest.raises(LabelFormatError, match=reason):
        read_dota(path, strict=True, label_map=label_map)


def test_label_map_forms(tmp_path):
    plain = tmp_path / "a.yaml"
    plain.write_text("0: Car # including vans\n1: Bus\n")
    assert load_label_map(plain) == {0: "Car", 1: "Bus"}
    ultralytics = tmp_path / "b.yaml"
    ultralytics.write_text("path: x\nnames: [car, bus]\n")
    assert load_label_map(ultralytics) == {0: "car", 1: "bus"}
    broken = tmp_path / "c.yaml"
    broken.write_text("car: 0\n")
    with pytest.raises(InputError, match="not an integer"):
        load_label_map(broken)
    with pytest.raises(InputError, match="not found"):
        load_label_map(tmp_path / "missing.yaml")


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(InputError, match="nope.txt: label file not found"):
        read_yolo_obb(tmp_path / "nope.txt", strict=True)
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(InputError, match="not UTF-8"):
        read_yolo_obb(binary, strict=True)


def test_write_then_read_round_trips(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("0 1 2 3 4 5.5 6 7 8\n3 10 20 30 20 30 40 10 40\n")
    boxes = read_yolo_obb(path, strict=True).boxes
    out = tmp_path / "out.txt"
    write_yolo_obb(out, boxes)
    again = read_yolo_obb(out, strict=True).boxes
    assert np.array_equal(again.corners, boxes.corners)
    assert out.read_text().splitlines()[0] == "0 1 2 3 4 5.5 6 7 8"


def test_image_sizes_from_headers_and_fixed(tmp_path):
    from PIL import Image

    Image.new("RGB", (64, 48)).save(tmp_path / "f1.png")
    sizes = ImageSizes(tmp_path)
    assert sizes("f1") == (64.0, 48.0)
    assert sizes("absent") is None
    assert ImageSizes(width=10, height=20)("anything") == (10.0, 20.0)
    assert not ImageSizes().known


# The bulk path (many clean files tokenized at once) must read every file exactly as the rule,
# restated line by line in tests/oracles/yolo_obb_rule.py, does; a file with a line it cannot take
# is screened line by line and its good lines read by the bulk path again.
BULK_CASES = {
    "integers": "0 10 20 30 20 30 40 10 40\n3 1 2 3 4 5 6 7 8\n",
    "decimals-and-exponents": "1 10.25 -2.5e1 3e-2 +4 .5 5. 6E2 7\n",
    "confidence": "0 1 2 3 4 5 6 7 8 0.9\n1 1 2 3 4 5 6 7 8 0.25\n",
    "mixed-confidence": "0 1 2 3 4 5 6 7 8 0.9\n1 1 2 3 4 5 6 7 8\n",
    "crlf-blank-lines": "\r\n0 1 2 3 4 5 6 7 8\r\n\r\n  \t \r\n2 1 2 3 4 5 6 7 8\r\n",
    "old-mac": "0 1 2 3 4 5 6 7 8\r\r5 1 2 3 4 5 6 7 8",
    "bom-tabs": "\ufeff0\t1 2 3 4 5 6 7 8\n",
    "normalized": "0 0.1 0.2 0.3 0.2 0.3 0.4 0.1 0.4\n",
    "long-digits": "0 0.1000000000000000055511151231257827 2 3 4 5 6 7 123456789012345678901\n",
    "negative-zero-class": "-0 1 2 3 4 5 6 7 8\n+2 1 2 3 4 5 6 7 8\n",
    "empty": "",
    "only-blank": "\n \n",
    "short-line": "0 1 2 3 4 5 6 7 8\n0 1 2\n",
    "float-class": "1.0 1 2 3 4 5 6 7 8\n",
    "exponent-class": "1e0 1 2 3 4 5 6 7 8\n",
    "nan": "0 1 2 3 nan 5 6 7 8\n",
    "overflow": "0 1 2 3 4 5 6 7 1e999\n",
    "glued-numbers": "0 1-2 3 4 5 6 7 8 9\n",
    "two-dots": "0 1.2.3 3 4 5 6 7 8 9\n",
    "word": "car 1 2 3 4 5 6 7 8\n",
    "underscore": "0 1_0 2 3 4 5 6 7 8\n",
    "huge-class": "123456789012345678 1 2 3 4 5 6 7 8\n",
}


def _same_label_file(a, b):
    for name in ("corners", "class_id", "score", "line", "difficult"):
        x, y = getattr(a.boxes, name), getattr(b.boxes, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8)), name  # bit for bit
    assert [str(p) for p in a.problems] == [str(p) for p in b.problems]
    assert a.normalized == b.normalized


@pytest.mark.parametrize("content", BULK_CASES.values(), ids=BULK_CASES.keys())
def test_bulk_path_reads_as_the_careful_reader(tmp_path, content):
    path = tmp_path / "f.txt"
    path.write_bytes(content.encode("utf-8"))
    careful = yolo_obb_rule.read(path, content.encode("utf-8"))
    _same_label_file(read_yolo_obb(path, strict=False), careful)
    if careful.problems:
        with pytest.raises(LabelFormatError) as info:
            read_yolo_obb(path, strict=True)
        assert str(info.value) == str(careful.problems[0])


@pytest.mark.parametrize("parse_bytes", [1 << 18, 1], ids=["one-pass", "a-pass-per-file"])
def test_batch_reads_each_file_as_alone_and_raises_the_first_broken_strict_file(tmp_path, monkeypatch, parse_bytes):
    import hbb2obb.io.yolo_obb as yolo_obb
    from hbb2obb.io.yolo_obb import read_obb_batch

    monkeypatch.setattr(yolo_obb, "_PARSE_BYTES", parse_bytes)

    paths = []
    for index, content in enumerate(BULK_CASES.values()):
        paths.append(tmp_path / f"{index:02d}.txt")
        paths[-1].write_bytes(content.encode("utf-8"))
    dota = tmp_path / "d.dota"
    dota.write_text("1 2 5 2 5 6 1 6 car 1\n")
    batch = read_obb_batch(paths + [None, dota], strict=False, label_map={0: "car"})
    alone = [read_obb_labels(p, strict=False, label_map={0: "car"}) for p in paths + [dota]]
    assert batch.counts.tolist() == [len(f.boxes) for f in alone[:-1]] + [0, 1]
    for index, label_file in enumerate(alone[:-1]):
        files = np.zeros(len(paths) + 2, dtype=bool)
        files[index] = True
        boxes = batch.boxes(files)
        assert (
            np.array_equal(boxes.corners, label_file.boxes.corners)
            and boxes.line.tolist() == label_file.boxes.line.tolist()
        )
        assert [str(p) for p in batch.problems[index]] == [str(p) for p in label_file.problems]
        assert batch.normalized[index] == label_file.normalized
    only_dota = np.zeros(len(paths) + 2, dtype=bool)
    only_dota[-1] = True
    assert batch.boxes(only_dota).difficult.tolist() == [True]
    assert batch.boxes(~only_dota).difficult is None  # not every file has the flag
    first_broken = next(i for i, f in enumerate(alone) if f.problems)
    with pytest.raises(LabelFormatError) as info:
        read_obb_batch(paths, strict=True)
    assert str(info.value) == str(alone[first_broken].problems[0])


# Files of plain integers take a quicker tokenizer (no byte table, SWAR digit conversion): the
# same rows, bit for bit, as the general pass, and the same boxes and messages as the careful reader.
PLAIN_CASES = {
    "integers": "0 10 20 30 20 30 40 10 40\n3 1 2 3 4 5 6 7 8\n",
    "negative-and-minus-zero": "0 -10 20 -0 20 30 40 10 -40\n-3 1 2 3 4 5 6 7 -8\n",
    "eight-digits": "0 12345678 99999999 1 2 3 4 5 00000000\n",
    "leading-zeros": "007 0010 2 3 4 5 6 7 8\n",
    "blank-lines-and-spaces": "\n  0 1 2 3 4 5 6 7 8  \n \n\n1  1 2 3 4 5 6 7 8\n\n",
    "no-final-newline": "0 1 2 3 4 5 6 7 8\n1 1 2 3 4 5 6 7 8",
    "integer-confidence": "0 1 2 3 4 5 6 7 8 1\n1 1 2 3 4 5 6 7 8 0\n",
    "mixed-confidence": "0 1 2 3 4 5 6 7 8 1\n1 1 2 3 4 5 6 7 8\n",
    "normalized-integers": "0 0 1 1 0 1 1 0 1\n",
    "empty": "",
    "only-newlines": "\n\n",
    "short-line": "0 1 2 3 4 5 6 7 8\n0 1 2\n",
    "long-line": "0 1 2 3 4 5 6 7 8 9 10\n",
    "nine-digits": "0 123456789 2 3 4 5 6 7 8\n",
    "lone-minus": "0 - 2 3 4 5 6 7 8\n",
    "double-minus": "0 --1 2 3 4 5 6 7 8\n",
    "minus-inside": "0 1-2 3 4 5 6 7 8 9\n",
    "minus-at-end": "0 12- 3 4 5 6 7 8 9\n",
}


@pytest.mark.parametrize("content", PLAIN_CASES.values(), ids=PLAIN_CASES.keys())
def test_plain_integer_files_read_as_the_careful_reader(tmp_path, content):
    path = tmp_path / "f.txt"
    path.write_bytes(content.encode("utf-8"))
    _same_label_file(read_yolo_obb(path, strict=False), yolo_obb_rule.read(path, content.encode("utf-8")))


def _random_plain_files(rng, count):
    """Integer label text with the irregular spacing, signs, blank lines and field counts files have."""
    files = []
    for _ in range(count):
        lines = []
        for _ in range(rng.integers(0, 6)):
            fields = rng.choice([0, 9, 9, 9, 10, 3])
            digits = rng.integers(1, 9, fields)
            numbers = [("-" if rng.random() < 0.2 else "") + "".join(map(str, rng.integers(0, 10, d))) for d in digits]
            blank = " " * int(rng.integers(0, 3))
            lines.append(blank + (" " * int(rng.integers(1, 3))).join(numbers) + blank)
        end = "\n" if rng.random() < 0.8 else ""
        files.append(("\n".join(lines) + end).encode())
    return files


@pytest.mark.parametrize("seed", range(4))
def test_plain_integer_pass_equals_the_general_pass(seed):
    from hbb2obb.io import numeric_text as text

    rng = np.random.default_rng(seed)
    blobs = _random_plain_files(rng, 40) + [None, b""]
    clean = np.array([b is not None for b in blobs])
    plain = text._plain_integer_pass(blobs, clean)
    general = text._numeric_pass(blobs, clean)
    assert plain is not None and isinstance(general, text.NumericRows)
    for name in text.NumericRows.__dataclass_fields__:
        mine, theirs = getattr(plain, name), getattr(general, name)
        if name == "plain":  # the one field that tells the passes apart: short integers, nothing to range-check
            assert mine is True and theirs is False
            continue
        assert mine.dtype == theirs.dtype and np.array_equal(mine.view(np.uint8), theirs.view(np.uint8)), name
    assert np.abs(plain.values).max(initial=0) < 1e8
    tokens = [float(t) for b in blobs if b for t in b.split()]
    assert np.array_equal(plain.values.view(np.uint64), np.array(tokens, dtype=np.float64).view(np.uint64))


@pytest.mark.parametrize("text_", ["0 1.5 2\n", "0 1e3\n", "0 +1\n", "0\t1\n", "0 1\r\n", "0 123456789\n", "x 1\n",
                                   "0 - 1\n", "0 1-\n", "0 -\n"])
def test_plain_integer_pass_declines_other_text(text_):
    from hbb2obb.io import numeric_text as text

    assert text._plain_integer_pass([b"0 1 2\n", text_.encode()], np.ones(2, dtype=bool)) is None


def test_byte_order_marks_in_plain_files_are_stripped_and_the_batch_stays_plain():
    """The plain pass first sees the files as they are (a mark declines it), then without their marks."""
    from hbb2obb.io import numeric_text as text

    rng = np.random.default_rng(11)
    blobs = _random_plain_files(rng, 30)
    marked = [b"\xef\xbb\xbf" + b if i % 4 == 1 else b for i, b in enumerate(blobs)] + [None, b"\xef\xbb\xbf"]
    unmarked = blobs + [None, b""]
    assert text._plain_integer_pass(marked, np.array([b is not None for b in marked])) is None  # the mark itself
    with_marks, without = text.numeric_rows(marked), text.numeric_rows(unmarked)
    assert with_marks.plain and without.plain
    for name in text.NumericRows.__dataclass_fields__:
        mine, theirs = getattr(with_marks, name), getattr(without, name)
        assert np.array_equal(np.asarray(mine), np.asarray(theirs)), name
    general = text.numeric_rows(marked + [b"0 1.5 2\n"])  # a decimal: the general pass, marks stripped too
    assert not general.plain and general.clean.tolist() == [True] * 30 + [False, True, True]
    assert np.array_equal(general.values[:-3], without.values)


@pytest.mark.parametrize("width", [9, 10])
def test_plain_rows_of_one_width_read_as_the_checked_rows(width):
    """Plain rows of one valid width skip every test; the checked path gives the same rows, bit for bit."""
    from hbb2obb.io import numeric_text as text
    from hbb2obb.io.yolo_obb import _FastRows

    rng = np.random.default_rng(width)
    blobs = []
    for index in range(25):
        rows = rng.integers(-3, 4000, (int(rng.integers(0, 5)), width))
        if index % 5 == 0:
            rows[:, 1:9] = rng.integers(-2, 3, (len(rows), 8))  # normalized-looking files too
        blobs.append("".join(" ".join(map(str, r)) + "\n" for r in rows.tolist()).encode())
    fast = _FastRows._parse_group(blobs, 3)
    rows = text.numeric_rows(blobs)
    assert rows.plain and rows.row_fields.min() == rows.row_fields.max() == width
    values, with_confidence, file, line, clean = _FastRows._checked(rows, width)
    assert clean.all() and np.array_equal(fast.file, file + 3) and np.array_equal(fast.line, line)
    assert np.array_equal(fast.corners.reshape(-1, 8), values[:, 1:9]) and np.array_equal(fast.class_id, values[:, 0])
    assert np.array_equal(fast.score, values[:, 9] if width == 10 else np.full(len(values), np.nan), equal_nan=True)
    for index, blob in enumerate(blobs):
        counted = np.abs(values[file == index, 1:9])
        assert fast.normalized[index] == (-1 if not blob else int(counted.max() <= 2))
        assert fast.has_score[index] == (bool(blob) and width == 10)


@pytest.mark.parametrize("seed", range(3))
def test_row_layout_names_each_row_file_line_and_fields(seed):
    """Rows of many files (empty ones, blank lines, negatives or none) against a line-by-line split in Python."""
    from hbb2obb.io import numeric_text as text

    rng = np.random.default_rng(seed)
    blobs = [b"" if i % 7 == 3 else b for i, b in enumerate(_random_plain_files(rng, 60))]
    if seed == 0:
        blobs = [b.replace(b"-", b"") for b in blobs]  # no '-' anywhere: the pass that skips looking for signs
    expected = [(f, number, len(line.split())) for f, b in enumerate(blobs)
                for number, line in enumerate(b.split(b"\n"), start=1) if line.split()]
    for rows in (text.numeric_rows(blobs), text._numeric_pass(blobs, np.ones(len(blobs), dtype=bool))):
        assert list(zip(rows.row_file.tolist(), rows.row_line.tolist(), rows.row_fields.tolist())) == expected
        firsts = [float(b.split(b"\n")[n - 1].split()[0]) for f, n, _ in expected for b in [blobs[f]]]
        assert rows.values[rows.row_start].tolist() == firsts


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 500])
def test_rare_byte_positions_are_those_of_every_byte(count):
    from hbb2obb.io import numeric_text

    rng = np.random.default_rng(count)
    data = rng.choice(np.frombuffer(b"0123456789 \n", dtype=np.uint8), 5000)
    data[rng.choice(4990, count, replace=False)] = ord("-")
    data = data.tobytes() + b"-" * 3  # past the end given: not counted
    found = numeric_text._rare_byte_positions(data, b"-", 4990)
    expected = np.flatnonzero(np.frombuffer(data, dtype=np.uint8)[:4990] == ord("-"))
    if count > numeric_text._RARE_LIMIT:
        assert found is None
    else:
        assert found.dtype == np.intp and found.tolist() == expected.tolist()
    rows = [" ".join(f"-{i}" if i < count else str(i) for i in range(j, j + 9)) for j in range(0, 700, 9)]
    blobs = [("\n".join(rows) + "\n").encode()]  # count negative numbers: found one by one, or by the pass
    plain = numeric_text.numeric_rows(blobs)
    assert plain.plain and plain.values.tolist() == [float(t) for r in rows for t in r.split()]


def test_plain_integers_convert_every_short_integer_exactly():
    from hbb2obb.io.numeric_text import numeric_rows

    rng = np.random.default_rng(7)
    tokens = [str(i) for i in range(10000)] + [f"{i:08d}" for i in rng.integers(0, 10**8, 5000)]
    tokens += ["-" + t for t in tokens[::7]] + ["99999999", "-99999999", "-0"]
    rows = numeric_rows([" ".join(tokens).encode(), b"1 2 3 4\n"])  # widest token: 8 digits
    assert np.array_equal(
        rows.values.view(np.uint64), np.array([float(t) for t in tokens] + [1, 2, 3, 4]).view(np.uint64)
    )
    narrow = numeric_rows([" ".join(tokens[:10000]).encode()])  # at most 4 digits: 4-byte words
    assert np.array_equal(narrow.values, np.arange(10000.0))


@pytest.mark.parametrize("seed", range(4))
def test_decimals_convert_as_float_does_bit_for_bit(seed):
    from hbb2obb.io import numeric_text

    rng = np.random.default_rng(seed)
    tokens = []
    for _ in range(20000):  # every split of up to 15 digits around the dot, signs, leading zeros
        whole, fraction = rng.integers(0, 16), rng.integers(0, 16)
        if whole + fraction == 0 or whole + fraction > 15:
            continue
        digits = "".join(rng.choice(list("0123456789"), whole + fraction))
        dot = "." if fraction or rng.random() < 0.2 else ""
        tokens.append(rng.choice(["", "-", "+"]) + digits[:whole] + dot + digits[whole:])
    tokens += ["-0", "-0.0", "+0.", ".5", "-.25", "0.000000000000001", "999999999999999", "12345678.1234567",
               "0.123456789", "123456789.5", "-7.00000000"]
    blob = ("\n".join(" ".join(tokens[i:i + 9]) for i in range(0, len(tokens), 9)) + "\n").encode()
    rows = numeric_text.numeric_rows([blob])
    expected = np.array([float(t) for t in tokens])
    assert rows.clean.all() and not rows.plain
    assert np.array_equal(rows.values.view(np.uint64), expected.view(np.uint64))  # -0.0 and every last bit
    # the same tokens by the C conversion the tokenizer falls back to
    assert np.array_equal(numeric_text._convert(blob, len(tokens)).view(np.uint64), expected.view(np.uint64))


def test_batch_given_the_bytes_reads_as_from_disk(tmp_path):
    from hbb2obb.io.yolo_obb import read_obb_batch

    paths = []
    for index, content in enumerate(BULK_CASES.values()):
        paths.append(str(tmp_path / f"{index:02d}.txt"))
        (tmp_path / f"{index:02d}.txt").write_bytes(content.encode("utf-8"))
    dota = tmp_path / "d.DOTA"  # any case: always the careful reader, whatever bytes are given for it
    dota.write_text("1 2 5 2 5 6 1 6 car 1\n")
    every = paths + [None, str(dota), str(tmp_path / "gone.txt")]
    blobs = [open(p, "rb").read() for p in paths] + [b"junk", b"junk", None]
    given = read_obb_batch(every[:-1], strict=False, label_map={0: "car"}, blobs=blobs[:-1])
    read = read_obb_batch(every[:-1], strict=False, label_map={0: "car"})
    assert given.counts.tolist() == read.counts.tolist() and given.counts.tolist()[-2:] == [0, 1]
    assert np.array_equal(given.rows.corners, read.rows.corners) and given.normalized == read.normalized
    assert [[str(p) for p in f] for f in given.problems] == [[str(p) for p in f] for f in read.problems]
    for bytes_given in (blobs, None):  # a file that could not be read: the careful reader says why
        with pytest.raises(InputError, match="gone.txt: label file not found"):
            read_obb_batch(every, strict=False, label_map={0: "car"}, blobs=bytes_given)
    with pytest.raises(ValueError, match="blobs for"):
        read_obb_batch(every, strict=False, blobs=blobs[:-1])


@pytest.mark.parametrize("declined", [False, True], ids=["plain-pass", "a-file-sends-all-to-the-general-pass"])
def test_batch_of_plain_files_reads_each_file_as_alone(tmp_path, declined):
    from hbb2obb.io import numeric_text as text
    from hbb2obb.io.yolo_obb import read_obb_batch

    contents = list(PLAIN_CASES.values())
    if not declined:
        contents = contents[: list(PLAIN_CASES).index("nine-digits")]
    blobs = [c.encode("utf-8") for c in contents]
    assert (text._plain_integer_pass(blobs, np.ones(len(blobs), dtype=bool)) is None) == declined
    paths = []
    for index, content in enumerate(contents):
        paths.append(tmp_path / f"{index:02d}.txt")
        paths[-1].write_bytes(content.encode("utf-8"))
    batch = read_obb_batch(paths + [None], strict=False)
    for index, path in enumerate(paths):
        alone = read_yolo_obb(path, strict=False)
        files = np.zeros(len(paths) + 1, dtype=bool)
        files[index] = True
        boxes = batch.boxes(files)
        assert np.array_equal(boxes.corners.view(np.uint64), alone.boxes.corners.view(np.uint64))
        assert (
            boxes.class_id.tolist() == alone.boxes.class_id.tolist()
            and boxes.line.tolist() == alone.boxes.line.tolist()
        )
        assert (boxes.score is None) == (alone.boxes.score is None)
        assert [str(p) for p in batch.problems[index]] == [str(p) for p in alone.problems]
        assert batch.normalized[index] == alone.normalized


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 << 16])
def test_read_blobs_reads_whole_files_and_none_for_unreadable(tmp_path, size):
    from hbb2obb.io.text import read_blobs

    content = bytes(np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8))
    (tmp_path / "f.txt").write_bytes(content)
    blobs = read_blobs([tmp_path / "f.txt", str(tmp_path / "missing.txt"), tmp_path, tmp_path / "f.txt"])
    assert blobs[0] == content and blobs[3] == content
    assert blobs[1] is None and blobs[2] is None  # no file; a folder cannot be read


def test_batch_reads_unclean_files_in_the_order_given_and_slices_equal_masks(tmp_path):
    from hbb2obb.io.yolo_obb import read_obb_batch

    contents = ["0 1 2\n", GOOD + "car 1 2 3 4 5 6 7 8\n", GOOD * 2, GOOD.replace(" ", "\t") + GOOD.strip() + " 0.5\n"]
    paths = []
    for index, content in enumerate(contents):
        paths.append(tmp_path / f"{index}.txt")
        paths[-1].write_text(content)
    for order, first in (([0, 1, 2, 3], "0.txt:1"), ([3, 2, 1, 0], "1.txt:2"), (None, "0.txt:1")):
        with pytest.raises(LabelFormatError, match=first):
            read_obb_batch(paths, strict=True, order=order)
    batch = read_obb_batch(paths, strict=False, order=[2, 3, 0, 1])
    assert [len(p) for p in batch.problems] == [1, 1, 0, 0] and batch.counts.tolist() == [0, 1, 2, 2]
    for start, stop in ((0, 4), (1, 3), (2, 4), (2, 2), (3, 4)):
        mask = np.zeros(4, dtype=bool)
        mask[start:stop] = True
        by_slice, by_mask = batch.boxes(slice(start, stop)), batch.boxes(mask)
        _same_label_file(LabelFile(tmp_path, by_slice), LabelFile(tmp_path, by_mask))
    assert batch.boxes(slice(3, 4)).score is None  # one of its lines has no confidence


def test_a_normalized_box_reaching_past_the_frame_edge_keeps_its_file_normalized(tmp_path):
    """docs/metrics.md §1: |v| <= 2 is normalized; a fitted box at the border reaches -0.004 or 1.0005."""
    from hbb2obb.io.yolo_obb import read_obb_batch

    path = tmp_path / "edge.txt"
    path.write_text("0 0.5 0.5 0.6 0.5 0.6 0.6 0.5 0.6\n0 -0.0041 0.02 0.1 0.02 0.1 0.1 0.0 1.0005\n")
    assert read_yolo_obb(path, strict=True).normalized is True
    assert read_obb_batch([path], strict=True).normalized == [True]
    path.write_text("0 2.5 0 3 0 3 1 2.5 1\n")  # beyond 2: pixels
    assert read_yolo_obb(path, strict=True).normalized is False
