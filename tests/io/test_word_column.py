"""The bulk path of the DOTA and Task1 readers against their careful line-by-line path.

Every file is read twice: as the readers read it (clean files in bulk through
:mod:`hbb2obb.io.word_column`, the rest line by line) and with the bulk path turned off (every
file line by line, the reader as it was before the bulk path existed). Boxes, classes, scores,
difficult flags, line numbers, problems and errors must be the same, on clean files and on
files made hostile in every way the bad-input rule names.
"""

import random

import numpy as np
import pytest

from hbb2obb.errors import InputError, LabelFormatError
from hbb2obb.io import dota, dota_task1
from hbb2obb.io.text import MAX_COORDINATE
from hbb2obb.io.word_column import table, word_rows
from hbb2obb.io.yolo_obb import read_obb_batch

MAP = {0: "plane", 1: "small-vehicle", 2: "Ship", 3: "ground-track-field"}
NAMES = ["plane", "small-vehicle", "Ship", "ship", "SHIP", "ground-track-field"]

# One change per broken or unusual file: each either keeps the file clean (read in bulk) or
# sends it the careful way; both must give what the careful path gives.
CHANGES = [
    lambda line, r: line,
    lambda line, r: line.replace(" ", "\t", 1),
    lambda line, r: line.replace(" ", "  ", 1),
    lambda line, r: line + " ",
    lambda line, r: " " + line,
    lambda line, r: line.rsplit(" ", 1)[0],  # no difficult column
    lambda line, r: line + " 0.75",  # name difficult score
    lambda line, r: line.rsplit(" ", 1)[0] + " " + r.choice(["0.5", "01", "-0", "1.0", "2", "x", "nan"]),
    lambda line, r: line.replace(line.split()[r.randrange(8)], r.choice(["nan", "inf", "1e400", "1_0", "x", "--1"]), 1),
    lambda line, r: line.replace(line.split()[r.randrange(8)], r.choice(["1e3", "-2.5", "+3", ".5", "5.", "1e13"]), 1),
    lambda line, r: line.replace(line.split()[8], r.choice(["car", "7", "plane2", "pl\u00e4ne", "1e5"]), 1),
    lambda line, r: " ".join(line.split()[:5]),
    lambda line, r: line.split()[8],
    lambda line, r: "imagesource:GoogleEarth",
    lambda line, r: "gsd: 0.5",
    lambda line, r: "",
    lambda line, r: "   ",
]


def _dota_line(r: random.Random) -> str:
    numbers = [str(r.randint(-5, 3000)) if r.random() < 0.7 else f"{r.uniform(-5, 3000):.{r.randint(1, 4)}f}"
               for _ in range(8)]
    return " ".join(numbers + [r.choice(NAMES), r.choice("0001")])


def _dota_file(r: random.Random) -> bytes:
    lines = ["imagesource:GoogleEarth", "gsd:0.3"] if r.random() < 0.5 else []
    headers = len(lines)
    lines += [_dota_line(r) for _ in range(r.randint(0, 12))]
    if len(lines) > headers and r.random() < 0.6:
        at = r.randrange(headers, len(lines))
        lines[at] = r.choice(CHANGES)(lines[at], r)
    text = "\n".join(lines) + ("\n" if r.random() < 0.8 else "")
    if r.random() < 0.1:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    if r.random() < 0.05:
        data = b"\xef\xbb\xbf" + data
    return data


def _careful_only(monkeypatch) -> None:
    bulk = dota.read_dota_many
    monkeypatch.setattr(dota, "read_dota_many", lambda blobs, strict, label_map: bulk(blobs, strict, None))


@pytest.fixture(params=["whole", "in pieces"])
def pieces(request, monkeypatch):
    """Files read whole, or cut into pieces of a few lines and split a few pieces at a time (as long files are)."""
    if request.param == "in pieces":
        from hbb2obb.io import word_column

        monkeypatch.setattr(word_column, "_PIECE_BYTES", 60)
        monkeypatch.setattr(word_column, "_GROUP_BYTES", 300)


@pytest.mark.parametrize("seed", range(40))
def test_dota_in_bulk_reads_as_line_by_line(tmp_path, monkeypatch, pieces, seed):
    r = random.Random(seed)
    paths = []
    for index in range(12):
        path = tmp_path / f"f{index}.txt"
        path.write_bytes(_dota_file(r))
        paths.append(path)
    strict = [r.random() < 0.5 for _ in paths]

    def read():
        try:
            batch = read_obb_batch(paths, strict=strict, label_map=MAP)
        except (InputError, LabelFormatError) as exc:
            return type(exc), str(exc)
        return batch

    bulk = read()
    _careful_only(monkeypatch)
    careful = read()
    if isinstance(careful, tuple):
        assert bulk == careful
        return
    assert not isinstance(bulk, tuple), bulk
    assert bulk.problems == careful.problems
    assert bulk.has_difficult.tolist() == careful.has_difficult.tolist()
    assert np.array_equal(bulk.difficult, careful.difficult)
    for index in range(len(paths)):
        mask = np.zeros(len(paths), dtype=bool)
        mask[index] = True
        a, b = bulk.boxes(mask), careful.boxes(mask)
        assert np.array_equal(a.corners, b.corners) and np.array_equal(a.class_id, b.class_id)
        assert np.array_equal(a.line, b.line)
        assert (a.score is None) == (b.score is None) and (a.score is None or np.array_equal(a.score, b.score))
    assert bulk.normalized == careful.normalized


def test_clean_dota_files_are_read_in_bulk(tmp_path):
    """The bulk path takes the usual files (else the speed would silently be lost), as read_dota reads them."""
    r = random.Random(1)
    blobs = [("\n".join(["imagesource:GoogleEarth", "gsd:0.3"] + [_dota_line(r) for _ in range(5)]) + "\n").encode()
             for _ in range(3)]
    blobs.append(b"1 2 3 4 5 6 7 8 plane 0.5\n0 0 1 0 1 1 0 1 ship 0\n")  # a detector's confidence column
    found = dota.read_dota_many(blobs, [True, True, False, False], MAP)
    assert found.files.tolist() == [0, 1, 2, 3] and found.scored.tolist() == [False, False, False, True]
    for index, blob in enumerate(blobs):
        path = tmp_path / f"{index}.txt"
        path.write_bytes(blob)
        one = dota.read_dota(path, strict=index < 2, label_map=MAP).boxes
        rows = found.file == index
        assert np.array_equal(found.corners[rows], one.corners) and np.array_equal(found.class_id[rows], one.class_id)
        assert np.array_equal(found.line[rows], one.line) and np.array_equal(found.difficult[rows], one.difficult)
        if one.score is None:
            assert np.isnan(found.score[rows]).all()
        else:
            assert np.array_equal(found.score[rows], one.score)


def _task1_row(r: random.Random) -> str:
    image = r.choice(["P0001", "P0002", "P0003_left", "0004", "P0005"])
    numbers = [f"{r.uniform(0, 1):.4f}"] + [f"{r.uniform(-5, 1500):.1f}" for _ in range(8)]
    return " ".join([image] + numbers)


def _task1_file(r: random.Random) -> str:
    lines = [_task1_row(r) for _ in range(r.randint(0, 15))]
    if lines and r.random() < 0.6:
        at = r.randrange(len(lines))
        fields = lines[at].split()
        lines[at] = r.choice([
            " ".join(fields[:-1]), lines[at] + " 1", fields[0], lines[at].replace(fields[1], "nan", 1),
            lines[at].replace(fields[3], "1e400", 1), lines[at].replace(fields[3], "1e13", 1),
            lines[at].replace(" ", "\t", 1), "  " + lines[at], lines[at] + "  ", "",
            "P\u00e90001 " + " ".join(fields[1:]), lines[at].replace(fields[2], "-1.5e2", 1)])
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(30))
def test_task1_in_bulk_reads_as_line_by_line(tmp_path, monkeypatch, pieces, seed):
    r = random.Random(seed)
    for name in ("plane", "small-vehicle", "ship"):
        (tmp_path / f"Task1_{name}.txt").write_text(_task1_file(r), encoding="utf-8")
    bulk = dota_task1.read_task1(tmp_path, MAP)
    monkeypatch.setattr(dota_task1, "_bulk_rows", lambda blobs: ((), {}))
    careful = dota_task1.read_task1(tmp_path, MAP)
    assert bulk.problems == careful.problems
    assert list(bulk.boxes) == list(careful.boxes)  # the images in the same order
    for image, boxes in careful.boxes.items():
        other = bulk.boxes[image]
        for field in ("corners", "class_id", "score", "line"):
            assert np.array_equal(getattr(other, field), getattr(boxes, field)), (image, field)


def test_a_long_file_in_pieces_keeps_its_line_numbers_and_goes_whole_the_careful_way(monkeypatch):
    from hbb2obb.io import word_column

    monkeypatch.setattr(word_column, "_PIECE_BYTES", 20)
    monkeypatch.setattr(word_column, "_GROUP_BYTES", 50)
    rows = [f"P{i % 3} 0.5 {i} 2" for i in range(40)]
    split = word_rows(["\n".join(rows).encode(), b"P9 1 2\n"], column=0)
    assert split.rows.clean.tolist() == [True, True]
    assert split.rows.row_line.tolist() == list(range(1, 41)) + [1]
    assert split.rows.values[:120].reshape(-1, 3)[:, 1].tolist() == [float(i) for i in range(40)]
    assert [split.vocabulary[w] for w in split.word] == [f"P{i % 3}" for i in range(40)] + ["P9"]
    rows[33] = "P1 0.5 x 2"  # one broken row in a late piece: the whole file the careful way
    split = word_rows(["\n".join(rows).encode(), b"P9 1 2\n"], column=0)
    assert split.rows.clean.tolist() == [False, True] and split.rows.row_file.tolist() == [1]


def test_a_word_alone_on_its_line_sends_the_file_the_careful_way():
    split = word_rows([b"P1 0.5 1 2\nP2\n", b"P1 0.5 1 2\n"], column=0)
    assert split.rows.clean.tolist() == [False, True]


def test_two_words_that_share_a_key_are_still_told_apart(monkeypatch):
    from hbb2obb.io import word_column

    monkeypatch.setattr(word_column, "_MIXING", (np.uint64(0),) * 2)  # words of one length share a key
    split = word_rows([b"car 1 2\nbus 3 4\ncar 5 6\n"], column=0)
    assert [split.vocabulary[w] for w in split.word] == ["car", "bus", "car"]


@pytest.mark.parametrize("mixing", ["usual", "none"])
def test_long_words_that_differ_only_in_their_middle_bytes_are_told_apart(monkeypatch, mixing):
    from hbb2obb.io import word_column

    if mixing == "none":
        monkeypatch.setattr(word_column, "_MIXING", (np.uint64(0),) * 2)
    # past 16 bytes, the first and last 8 do not cover a word: its middle bytes are compared too
    words = [b"ground-track-field-a", b"ground-track-fielc-a", b"x" * 18 + b"1" + b"x" * 12,
             b"x" * 18 + b"2" + b"x" * 12, b"ground"]
    order = [0, 1, 2, 3, 4, 1, 0, 4, 2, 2, 3, 3]
    split = word_rows([b"".join(words[i] + b" 1 2\n" for i in order)], column=0)
    assert [split.vocabulary[w] for w in split.word] == [words[i].decode() for i in order]


def _dota_taken(tmp_path, blob: bytes, strict: bool = False) -> bool:
    """Whether the bulk path takes a DOTA file; when it does, its arrays must be read_dota's, bit for bit."""
    found = dota.read_dota_many([blob], [strict], MAP)
    if not found.files.size:
        return False
    path = tmp_path / "one.txt"
    path.write_bytes(blob)
    one = dota.read_dota(path, strict=strict, label_map=MAP).boxes
    assert found.corners.tobytes() == one.corners.tobytes()  # bytes: -0.0 and 0.0 told apart
    assert found.class_id.tolist() == one.class_id.tolist() and found.line.tolist() == one.line.tolist()
    assert found.difficult.tolist() == one.difficult.tolist()
    assert found.score.tobytes() == (np.full(len(one), np.nan) if one.score is None else one.score).tobytes()
    return True


GOOD = "1 2 3 4 5 6 7 8 plane 0\n"


@pytest.mark.parametrize("text, taken", [
    (GOOD + "plane 2 3 4 5 6 7 8 9 0\n", False),  # the name in field 1: field 9 is a number
    (GOOD + "1 2 3 4 5 6 7 plane 8 0\n", False),  # the name in field 8, the count right
    (GOOD + "1 plane 3 4 5 6 7 8 ship 0\n", False),  # a second name, the field count right
    (GOOD + "1e3 2 3 4 5 6 7 8 plane 0\n", False),  # an exponent next to the names
    (GOOD + "1 2 3 4 5 6 7 8 1e5 0\n", False),  # a numeric-looking name
    (GOOD + "1 2 3 4 5 6 7 8 7 0\n", False),
    (GOOD + "+1 2 3 4 5 6 7 8 plane 0\n", False),
    (GOOD + "1-2 2 3 4 5 6 7 8 small-vehicle 0\n", False),  # a '-' inside a number, '-' in the names
    (GOOD + "1 2 3 4 5 6 7 8 small-vehicle 0\n-0 -2 -3.5 4 5 6 7 8 small-vehicle 1\n", True),
    (GOOD + "1 2 3 4 5 6 7 8 plane\t0\n", False),
    (GOOD + "1 2 3 4 5 6 7 8 plane\x0c0\n", False),  # form feed: a separator to str.split, not a space
    (GOOD + "1 2 3 4 5 6 7 8 plane 0\x00\n", False),
    (GOOD + "1 2 3 4 5 6 7 8 pl\u00e4ne 0\n", False),
    (GOOD + "1 2 3 4 5 6 7 8 car 0\n", False),  # not in the label map
    (GOOD + "1 2 3 4 5 6 7 plane 0\n", False),  # too few fields
    (GOOD + "1 2 3 4 5 6 7 8 9 plane 0\n", False),  # too many
    (GOOD + "1 2 3 4 5 6 7 8 plane 0 0.5\n", False),  # a score after the flag
    (GOOD + "plane\n", False),
    (GOOD + "gsd:0.5\n", False),  # a header line after the boxes
    ("imagesource:GoogleEarth\ngsd:0.3\n" + GOOD, True),
    (GOOD + "  1  2 3 4 5 6 7 8   SHIP 1  \n", True),  # runs of spaces: str.split reads them alike
    (GOOD + ".5 5. 3 4 5 6 7 8 plane 0\n", True),
    (GOOD + "1.2.3 2 3 4 5 6 7 8 plane 0\n", False),
    (GOOD + "- 2 3 4 5 6 7 8 plane 0\n", False),
    (GOOD + "12345678901234567 2 3 4 5 6 7 8 plane 0\n", False),  # beyond the coordinate limit
    (GOOD + "0.12345678901234567 2 3 4 5 6 7 8 plane 0\n", True),  # 18 digits: np.fromstring reads it
    (GOOD + "123456789 2 3 4 5 6 7 8 plane 1\n", True),  # 9 digits: not the short-integer pass
    (GOOD + "1 2 3 4 5 6 7 8 " + "p" * 70 + " 0\n", False),
])
def test_hostile_dota_rows_are_read_as_line_by_line_or_left_to_it(tmp_path, text, taken):
    assert _dota_taken(tmp_path, text.encode("utf-8"), strict=False) is taken


def test_a_name_only_in_its_own_field_passes_the_census_whatever_bytes_it_holds(tmp_path):
    """Digits, '-' and '.' inside the names are told apart from the numbers' own."""
    names = {0: "small-vehicle", 1: "v1.5", 2: "-x-"}
    blob = b"-1 -2.5 3 4 5 6 7 8 small-vehicle 0\n1.5 2 -3 4 5 6 7 -8.25 v1.5 1\n-0 0 1 1 2 2 3 3 -x- 0\n"
    found = dota.read_dota_many([blob], [True], names)
    assert found.files.tolist() == [0]
    assert found.corners.reshape(-1, 8).tolist() == [[-1, -2.5, 3, 4, 5, 6, 7, 8], [1.5, 2, -3, 4, 5, 6, 7, -8.25],
                                                     [-0.0, 0, 1, 1, 2, 2, 3, 3]]
    assert np.signbit(found.corners[2, 0, 0]) and found.class_id.tolist() == [0, 1, 2]
    assert found.difficult.tolist() == [False, True, False]


@pytest.mark.parametrize("rows, taken", [
    (["P-1.a 0.5 -1.5 2 3 4 5 6 7 8", "P-1.a 0.25 1 -2.5 3 4 5 6 7 8"], True),  # '-' and '.' in the ids
    (["P1 0.123456789012345678 1 2 3 4 5 6 7 8"], True),  # a long score: np.fromstring
    (["P1 1e-3 1 2 3 4 5 6 7 8"], False),
    (["P1 0.5 1 2 3 4 5 6 7 x"], False),
    (["0.5 P1 1 2 3 4 5 6 7 8"], False),  # the id in field 2
    (["P1 0.5 1 2 3 4 5 6 7 8", "P1"], False),
    (["P1 0.5 1-2 2 3 4 5 6 7 8"], False),
    (["P1 0.5 1 2 3 4 5 6 7 8 9"], False),  # a field too many: the careful path's message
    (["  P1   0.5 1 2 3 4 5 6 7 8 "], True),
])
def test_hostile_task1_rows_are_read_as_line_by_line_or_left_to_it(tmp_path, monkeypatch, rows, taken):
    blob = ("\n".join(rows) + "\n").encode()
    assert (0 in dota_task1._bulk_rows([blob])[1]) is taken
    (tmp_path / "Task1_plane.txt").write_bytes(blob)
    bulk = dota_task1.read_task1(tmp_path, MAP)
    monkeypatch.setattr(dota_task1, "_bulk_rows", lambda blobs: ((), {}))
    careful = dota_task1.read_task1(tmp_path, MAP)
    assert bulk.problems == careful.problems and list(bulk.boxes) == list(careful.boxes)
    for image, boxes in careful.boxes.items():
        for field in ("corners", "class_id", "score", "line"):
            assert getattr(bulk.boxes[image], field).tobytes() == getattr(boxes, field).tobytes(), (image, field)


def test_a_bad_number_in_one_file_leaves_the_others_of_its_group_in_bulk():
    good = b"P1 0.5 1 2 3 4 5 6 7 8\n"
    split = word_rows([good, b"P2 0.5 1-2 2 3 4 5 6 7 8\n", good, b"P3 0.5 1.2.3 2 3 4 5 6 7 8\n"], column=0)
    assert split.rows.clean.tolist() == [True, False, True, False]
    assert split.rows.values.tolist() == [0.5, 1, 2, 3, 4, 5, 6, 7, 8] * 2


@pytest.mark.parametrize("blob", [b"\t\n", b"\x00", b" \t \n\n", b"imagesource:x\ngsd:1\n\t\n"])
@pytest.mark.parametrize("column", [0, -1, -2])
def test_text_of_no_token_but_control_bytes_goes_the_careful_way(blob, column):
    # no token at all in the group: the census finds the tab or NUL and has no word to put it in
    split = word_rows([blob], column, dota._blank_headers if column == -2 else None)
    assert split.rows.clean.tolist() == [False] and split.rows.row_file.size == 0


def test_a_dota_file_of_headers_and_a_tab_reads_as_line_by_line(tmp_path, monkeypatch):
    path = tmp_path / "a.txt"
    path.write_bytes(b"imagesource:x\ngsd:1\n\t\n")  # an error once: no token for the census to look in
    bulk = read_obb_batch([path], strict=True, label_map=MAP)
    _careful_only(monkeypatch)
    careful = read_obb_batch([path], strict=True, label_map=MAP)
    assert len(bulk.boxes(np.ones(1, dtype=bool))) == len(careful.boxes(np.ones(1, dtype=bool))) == 0
    assert bulk.problems == careful.problems


_HUGE = "1" + "0" * 400  # past float64: np.fromstring reads it as inf


@pytest.mark.parametrize("odd", [None, _HUGE, "-" + _HUGE, "2000000000000", "-2000000000000", "1000000000000",
                                 "-1000000000000", "9" * 300])
@pytest.mark.parametrize("column", [0, 1, 8])
def test_the_table_keeps_exactly_the_files_whose_values_pass_the_row_by_row_rule(odd, column):
    # One file a row: a Task1 score (which need only be finite), then eight corners (also
    # within MAX_COORDINATE either way). Long digit strings reach the table as inf through
    # np.fromstring; the whole-table shortcut must keep what the row-by-row rule keeps.
    rng = np.random.default_rng(column)
    fields = [[f"{v:.2f}" for v in row] for row in rng.uniform(-1000, 1000, (30, 9))]
    if odd is not None:
        fields[7][column] = odd
    rows = word_rows([("P " + " ".join(row) + "\n").encode() for row in fields], column=0).rows
    values = np.array([[float(v) for v in row] for row in fields])
    good = rows.clean.copy()
    keep, kept = table(rows, good, 9, slice(1, None))
    expected = np.isfinite(values).all(axis=1) & (np.abs(values[:, 1:]) <= MAX_COORDINATE).all(axis=1)
    assert rows.clean.all() and good.tolist() == expected.tolist() and keep.tolist() == expected.tolist()
    assert np.array_equal(kept, values[expected])
