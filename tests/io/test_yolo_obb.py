"""One YOLO-OBB reader path at its boundaries, against the rule restated line by line (tests/oracles).

A file with a line the bulk pass cannot take is screened line by line (broken lines reported and
blanked) and its good lines read by the bulk pass; every file, and every file of a batch, must
read as the rule says: the same boxes bit for bit, the same class ids exactly, the same problems.
"""

import numpy as np
import pytest

from hbb2obb.errors import LabelFormatError
from hbb2obb.io import read_yolo_obb
from hbb2obb.io.yolo_obb import read_obb_batch

from oracles import yolo_obb_rule

GOOD = "0 10 20 30 20 30 40 10 40"
CORNERS = " 1 2 3 4 5 6 7 8"

CASES = {
    "mixed-good-and-broken": f"{GOOD}\ncar{CORNERS}\n{GOOD} 0.5\n0 1 2\n3{CORNERS}\n1 1 2 3 nan 5 6 7 8\n",
    "count-after-a-row-reason": f"1.5{CORNERS}\n0 1 2\n{GOOD}\n",  # the field count is reported first
    "class-2-60": f"{2**60}{CORNERS}\n",
    "class-2-60-mixed": f"{2**60}{CORNERS}\n7 1 2 3 x 5 6 7 8\n-{2**60 + 1}{CORNERS} 0.5\n",
    "class-2-53-plus-1": f"{2**53 + 1}{CORNERS}\n{2**53}{CORNERS}\n",
    "class-int64-ends": f"{2**63 - 1}{CORNERS}\n{-(2**63)}{CORNERS}\n{2**63}{CORNERS}\n{-(2**63) - 1}{CORNERS}\n",
    "nan-line": f"0 1 2 3 nan 5 6 7 8\n{GOOD}\n",
    "nan-only": "0 1 2 3 4 NaN 6 7 8\n",
    "confidence-nan": f"{GOOD} nan\n{GOOD} 0.9\n",
    "empty": "",
    "crlf": f"{GOOD}\r\n\r\ncar{CORNERS}\r\n{GOOD}\r\n",
    "cr-broken": f"{GOOD}\r0 1\r{GOOD}\r",
    "bom-good": f"\ufeff{GOOD}\n{GOOD}\n",
    "bom-broken-first-line": f"\ufeffcar{CORNERS}\n{GOOD}\n",
    "trailing-blank-lines": f"{GOOD}\n0 1 2 3 4 5 6 7 1e13\n\n  \n\t\n\n",
    "odd-whitespace": f"0\xa01 2 3 4 5 6 7 8\n1\x0c1 2 3 4 5 6 7 8\u20280.25\n{GOOD}\n",
    "not-utf8-and-word": f"{GOOD}\nx{CORNERS}\n".encode() + b"\xff 1 2\n" + f"{GOOD}\n".encode(),
    "all-broken": "a b c\n0 1 2 3 4 5 6 7 inf\n",
    "normalized-after-screen": "0 0.1 0.2 0.3 0.2 0.3 0.4 0.1 0.4\n0 0.1 x 0.3 0.2 0.3 0.4 0.1 0.4\n",
    "pixels-once-big-line-dropped": "0 0.1 0.2 0.3 0.2 0.3 0.4 0.1 0.4\n0 0.1 1e99 0.3 0.2 0.3 0.4 0.1 0.4\n",
}


def _bytes(content):
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _assert_reads_as_the_rule(boxes, problems, normalized, expected):
    for name in ("corners", "class_id", "score", "line"):
        mine, theirs = getattr(boxes, name), getattr(expected.boxes, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
            assert mine.tobytes() == theirs.tobytes(), name  # bit for bit: -0.0, exact int64 ids
    assert boxes.class_id.tolist() == expected.boxes.class_id.tolist()  # Python ints: no rounding hides
    assert [str(p) for p in problems] == [str(p) for p in expected.problems]
    assert normalized == expected.normalized


@pytest.mark.parametrize("content", CASES.values(), ids=CASES.keys())
def test_a_file_reads_as_the_rule(tmp_path, content):
    path = tmp_path / "f.txt"
    path.write_bytes(_bytes(content))
    expected = yolo_obb_rule.read(path, _bytes(content))
    lenient = read_yolo_obb(path, strict=False)
    _assert_reads_as_the_rule(lenient.boxes, lenient.problems, lenient.normalized, expected)
    if expected.problems:
        with pytest.raises(LabelFormatError) as info:
            read_yolo_obb(path, strict=True)
        assert str(info.value) == str(expected.problems[0])
    else:
        strict = read_yolo_obb(path, strict=True)
        _assert_reads_as_the_rule(strict.boxes, strict.problems, strict.normalized, expected)


def test_huge_class_ids_keep_every_digit(tmp_path):
    """2**60 + 1 is not a float64: the class id is the integer written, not its rounding."""
    path = tmp_path / "f.txt"
    path.write_text(f"{2**60 + 1}{CORNERS}\n{-(2**62) - 3}{CORNERS}\n{GOOD}\n")
    assert read_yolo_obb(path, strict=True).boxes.class_id.tolist() == [2**60 + 1, -(2**62) - 3, 0]
    assert read_obb_batch([path], strict=True).rows.class_id.tolist() == [2**60 + 1, -(2**62) - 3, 0]


@pytest.mark.parametrize("parse_bytes", [1 << 17, 1], ids=["one-pass", "a-pass-per-file"])
def test_a_batch_reads_each_file_as_the_rule(tmp_path, monkeypatch, parse_bytes):
    import hbb2obb.io.yolo_obb as yolo_obb

    monkeypatch.setattr(yolo_obb, "_PARSE_BYTES", parse_bytes)
    paths = []
    for index, content in enumerate(CASES.values()):
        paths.append(tmp_path / f"{index:02d}.txt")
        paths[-1].write_bytes(_bytes(content))
    paths.append(tmp_path / "clean.txt")
    paths[-1].write_text(f"{GOOD}\n3{CORNERS}\n")
    batch = read_obb_batch(paths, strict=False)
    for index, path in enumerate(paths):
        files = np.zeros(len(paths), dtype=bool)
        files[index] = True
        expected = yolo_obb_rule.read(path, path.read_bytes())
        _assert_reads_as_the_rule(batch.boxes(files), batch.problems[index], batch.normalized[index], expected)


def _random_file(rng):
    """Lines of good and broken tokens, separators and line ends, as careless writers mix them."""
    good = ["0", "7", "-3", "12.5", "-0.25", "1e3", ".5", "5.", "+4", "-0", "0.1000000000000000055511"]
    broken = ["nan", "inf", "x", "1_0", "1e999", "1e13", "--1", "1.2.3", "\u0661"]
    classes = ["0", "3", "-0", "+2", str(2**60 + 7), str(2**63), "1.0", "car", "1e0"]
    lines = [GOOD] if rng.random() < 0.8 else []  # a broken first line may read as DOTA in a batch
    for _ in range(rng.integers(0, 8)):
        count = int(rng.choice([9, 9, 9, 10, 10, 8, 0]))
        fields = [str(rng.choice(classes))] + [str(rng.choice(good if rng.random() < 0.95 else broken))
                                               for _ in range(count - 1)]
        separator = str(rng.choice([" ", " ", "  ", "\t", "\xa0"]))
        lines.append(separator.join(fields[:count]))
    end = str(rng.choice(["\n", "\r\n", "\r"]))
    text = ("\ufeff" if rng.random() < 0.1 else "") + end.join(lines) + (end if rng.random() < 0.7 else "")
    return text.encode("utf-8")


@pytest.mark.parametrize("seed", range(3))
def test_random_mixed_files_read_as_the_rule(tmp_path, seed):
    rng = np.random.default_rng(seed)
    paths = []
    for index in range(60):
        paths.append(tmp_path / f"{index:02d}.txt")
        paths[-1].write_bytes(_random_file(rng))
    batch = read_obb_batch(paths, strict=False)
    for index, path in enumerate(paths):
        expected = yolo_obb_rule.read(path, path.read_bytes())
        alone = read_yolo_obb(path, strict=False)
        _assert_reads_as_the_rule(alone.boxes, alone.problems, alone.normalized, expected)
        if not path.read_bytes().lstrip(b"\xef\xbb\xbf").startswith(GOOD.encode()):
            continue  # its first box line may look like DOTA (a word in field 9): read_obb_labels' call
        _assert_reads_as_the_rule(batch.boxes(slice(index, index + 1)), batch.problems[index],
                                  batch.normalized[index], expected)
