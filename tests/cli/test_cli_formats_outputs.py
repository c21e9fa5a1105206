"""``hbb2obb-convert``'s outputs (issue 34): never over a user's file, nothing written before an
exit 2, real image names and EXIF sizes, safe names from COCO, and ``--verify`` over every layout."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from PIL import Image, ImageOps

from hbb2obb.cli.formats import main

FLAT = "0 1 1 5 1 5 3 1 3\n"  # an axis-aligned box: every format can carry it
TILTED = "0 1 1 5 2 4 4 0 3\n"  # an oriented box: VOC cannot


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args] + ["-nb"])


def _files(folder):
    """Every file under ``folder`` (hidden ones included), as relative names."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# ---- class 1: never overwrite a user's file -------------------------------------------------------------------

def test_a_hand_made_labelme_file_beside_the_source_is_refused_and_named(write_labels):
    mine = '{"shapes": [], "note": "drawn by hand"}'
    root = write_labels({"gt/a.txt": FLAT, "gt/a.json": mine})
    result = _run(root / "gt", "--to", "labelme", "-iw", 10, "-ih", 10)
    assert result.exit_code == 2
    assert str(root / "gt" / "a.json") in result.output and "--overwrite" in result.output
    assert (root / "gt" / "a.json").read_text() == mine
    forced = _run(root / "gt", "--to", "labelme", "-iw", 10, "-ih", 10, "--overwrite")
    assert forced.exit_code == 0, forced.output
    assert json.loads((root / "gt" / "a.json").read_text())["shapes"][0]["label"] == "class_0"


@pytest.mark.parametrize("target, existing", [("coco", "coco_annotations_hbb.json"), ("yolo", "a.txt"),
                                               ("dota", "a.dota"), ("voc", "a.xml")])
def test_a_users_file_in_the_output_folder_is_refused_with_nothing_written(write_labels, target, existing):
    root = write_labels({"gt/a.txt": FLAT, "gt/b.txt": FLAT, f"out/{existing}": "the user's own\n"})
    result = _run(root / "gt", "--to", "labelme", target, "-k", "obb" if target == "dota" else "hbb",
                  "-iw", 10, "-ih", 10, "-o", root / "out")
    assert result.exit_code == 2 and str(root / "out" / existing) in result.output
    assert _files(root / "out") == [existing]  # not even the labelme files of the first format
    assert (root / "out" / existing).read_text() == "the user's own\n"


def test_a_second_run_replaces_its_own_outputs_but_not_a_file_edited_since(write_labels):
    root = write_labels({"gt/a.txt": FLAT})
    args = (root / "gt", "--to", "coco", "labelme", "-iw", 10, "-ih", 10, "-o", root / "out")
    assert _run(*args).exit_code == 0
    assert _run(*args).exit_code == 0  # its own files: replaced without --overwrite
    (root / "out" / "a.json").write_text('{"shapes": []}')  # somebody edits an output
    again = _run(*args)
    assert again.exit_code == 2 and str(root / "out" / "a.json") in again.output
    assert (root / "out" / "a.json").read_text() == '{"shapes": []}'


# ---- class 2: nothing written before an exit 2 ----------------------------------------------------------------

@pytest.mark.parametrize("extra, message", [
    (["--to", "yolo", "voc", "-iw", 10, "-ih", 10], "voc cannot carry oriented boxes"),
    (["--to", "dota", "coco"], "frame size unknown"),
    (["--to", "yolo", "labelme", "--normalize"], "frame size unknown"),
    (["--to", "labelme", "dota", "--dota_ext", "sub/x.dota", "-iw", 10, "-ih", 10], "--dota_ext"),
    (["--to", "dota", "--dota_ext", "/../../x.dota"], "--dota_ext"),
    (["--to", "labelme", "dota", "--dota_ext", ".json", "-iw", 10, "-ih", 10], "both"),
    (["--to", "dota", "coco", "--coco_name", "../escape.json", "-iw", 10, "-ih", 10], "--coco_name"),
    (["--to", "dota", "labelme", "--coco_name", "x.json", "-iw", 10, "-ih", 10], None),  # no coco: unused, fine
])
def test_every_output_is_checked_before_the_first_file_is_written(write_labels, extra, message):
    root = write_labels({"gt/a.txt": TILTED})
    result = _run(root / "gt", "-o", root / "out", *extra)
    if message is None:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert _files(root / "out") == [] and _files(root) == ["gt/a.txt"]


def test_the_written_files_are_whole_and_no_temporary_file_is_left(write_labels):
    root = write_labels({"gt/a.txt": FLAT, "gt/b.txt": TILTED})
    assert _run(root / "gt", "--to", "coco", "dota", "labelme", "yolo", "-iw", 10, "-ih", 10,
                "-o", root / "out").exit_code == 0
    names = _files(root / "out")
    assert not [n for n in names if ".tmp" in n]
    assert names == [".hbb2obb-written.json", "a.dota", "a.json", "a.txt", "b.dota", "b.json", "b.txt",
                     "coco_annotations_obb.json"]


# ---- class 7 (writer side): an odd COCO file_name never writes a hidden file or one outside the folder ---------

@pytest.mark.parametrize("file_name", ["", ".hidden.png", "..", "a/..", "."])
def test_an_odd_coco_file_name_writes_no_hidden_file_and_nothing_outside(write_labels, file_name):
    coco = {"images": [{"id": 1, "file_name": file_name, "width": 10, "height": 10}],
            "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 4, 2]}],
            "categories": [{"id": 1, "name": "car"}]}
    root = write_labels({"src/set.json": json.dumps(coco)})
    result = _run(root / "src" / "set.json", "--to", "yolo", "labelme", "-o", root / "out" / "labels")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert _files(root / "out") == [] and _files(root) == ["src/set.json"]


@pytest.mark.parametrize("file_name", ["..\\..\\x.jpg", "../../x.jpg", "/abs/x.jpg", "train/x.jpg"])
def test_a_coco_file_name_with_folders_names_its_frame_inside_the_output(write_labels, file_name):
    # the reader keeps a file_name's last part (COCO sets often say train/x.jpg): the frame is x, written inside -o
    coco = {"images": [{"id": 1, "file_name": file_name, "width": 10, "height": 10}],
            "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 4, 2]}],
            "categories": [{"id": 1, "name": "car"}]}
    root = write_labels({"src/set.json": json.dumps(coco)})
    result = _run(root / "src" / "set.json", "--to", "yolo", "-o", root / "out" / "labels")
    assert result.exit_code == 0, result.output
    assert [f for f in _files(root) if not f.endswith(".hbb2obb-written.json")] == ["out/labels/x.txt", "src/set.json"]


# ---- class 8: outputs name the real images; sizes honour EXIF ------------------------------------------------

def test_coco_labelme_and_voc_name_each_frames_real_image(write_labels):
    root = write_labels({"gt/a.txt": FLAT, "gt/b.txt": FLAT, "gt/c.txt": FLAT})
    (root / "imgs").mkdir()
    Image.new("RGB", (20, 10)).save(root / "imgs" / "a.png")
    Image.new("RGB", (20, 10)).save(root / "imgs" / "b.JPG", format="JPEG")
    Image.new("RGB", (20, 10)).save(root / "imgs" / "c.jpeg")
    result = _run(root / "gt", "--to", "coco", "labelme", "voc", "-i", root / "imgs", "-o", root / "out")
    assert result.exit_code == 0, result.output
    coco = json.loads((root / "out" / "coco_annotations_hbb.json").read_text())
    assert [image["file_name"] for image in coco["images"]] == ["a.png", "b.JPG", "c.jpeg"]
    for stem, name in (("a", "a.png"), ("b", "b.JPG"), ("c", "c.jpeg")):
        assert json.loads((root / "out" / f"{stem}.json").read_text())["imagePath"] == name
        voc = ET.parse(root / "out" / f"{stem}.xml").getroot()
        assert voc.findtext("filename") == name and voc.findtext("path") == f"imgs/{name}"
        assert voc.findtext("folder") == "imgs"


def test_without_images_each_frame_keeps_the_image_its_source_names(write_labels):
    """COCO ``file_name``, LabelMe ``imagePath`` and VOC ``<filename>`` carry over; no ``STEM.jpg`` is made up."""
    coco = {"images": [{"id": 1, "file_name": "train/a.png", "width": 20, "height": 10},
                       {"id": 2, "file_name": "b.JPG", "width": 20, "height": 10}],
            "annotations": [{"id": i, "image_id": i, "category_id": 1, "bbox": [1, 1, 4, 2]} for i in (1, 2)],
            "categories": [{"id": 1, "name": "car"}]}
    root = write_labels({"src/set.json": json.dumps(coco)})
    result = _run(root / "src" / "set.json", "--to", "labelme", "voc", "-o", root / "out")
    assert result.exit_code == 0, result.output
    assert json.loads((root / "out" / "a.json").read_text())["imagePath"] == "a.png"
    assert ET.parse(root / "out" / "b.xml").getroot().findtext("filename") == "b.JPG"
    again = _run(root / "out", "--from", "labelme", "--to", "coco", "-o", root / "back")
    assert again.exit_code == 0, again.output
    back = json.loads(next((root / "back").glob("coco_*.json")).read_text())
    assert [image["file_name"] for image in back["images"]] == ["a.png", "b.JPG"]
    # a name that is not this frame's image (another frame's, or none) is not carried
    labelme = json.loads((root / "out" / "a.json").read_text())
    (root / "out" / "a.json").write_text(json.dumps({**labelme, "imagePath": "other.png"}))
    third = _run(root / "out", "--from", "labelme", "--to", "coco", "-o", root / "third")
    assert third.exit_code == 0, third.output
    names = [i["file_name"] for i in json.loads(next((root / "third").glob("coco_*.json")).read_text())["images"]]
    assert names == ["a.jpg", "b.JPG"]


def test_image_sizes_honour_the_exif_orientation(write_labels):
    root = write_labels({"gt/a.txt": "0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n"})  # normalized: scaled by the size
    (root / "imgs").mkdir()
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    Image.new("RGB", (40, 20)).save(root / "imgs" / "a.jpg", exif=exif)
    with Image.open(root / "imgs" / "a.jpg") as image:
        shown = ImageOps.exif_transpose(image).size  # the oracle: the frame a viewer shows
    assert shown == (20, 40)
    result = _run(root / "gt", "--to", "coco", "labelme", "voc", "-i", root / "imgs", "-o", root / "out")
    assert result.exit_code == 0, result.output
    image = json.loads((root / "out" / "coco_annotations_hbb.json").read_text())["images"][0]
    assert (image["width"], image["height"]) == shown
    labelme = json.loads((root / "out" / "a.json").read_text())
    assert (labelme["imageWidth"], labelme["imageHeight"]) == shown
    assert labelme["shapes"][0]["points"] == [[2.0, 4.0], [10.0, 12.0]]  # 0.1 * 20, 0.1 * 40, ...
    voc = ET.parse(root / "out" / "a.xml").getroot()
    assert (int(voc.findtext("size/width")), int(voc.findtext("size/height"))) == shown


# ---- class 9: --verify verifies what is there -----------------------------------------------------------------

def test_verify_compares_a_coco_file_beside_labelme_files(write_labels):
    root = write_labels({"gt/a.txt": FLAT, "gt/b.txt": TILTED})
    assert _run(root / "gt", "--to", "coco", "labelme", "-iw", 10, "-ih", 10, "-o", root / "out").exit_code == 0
    good = _run(root / "out", "--verify")
    assert good.exit_code == 0, good.output
    assert good.output == ("out: 2 frames, 2 boxes, 2 formats (coco, labelme)\n"
                           "OK: 2 boxes, every format encodes the same boxes\n")
    coco_path = root / "out" / "coco_annotations_obb.json"
    coco = json.loads(coco_path.read_text())
    coco["annotations"][1]["segmentation"][0][0] += 3
    coco_path.write_text(json.dumps(coco))
    bad = _run(root / "out", "--verify")
    assert bad.exit_code == 1 and "out/b#0: labelme corners disagree with coco" in bad.output


def test_verify_reads_the_coco_file_written_into_the_same_folder_as_dota(write_labels):
    root = write_labels({"gt/a.txt": FLAT, "gt/b.txt": "1" + TILTED[1:]})
    assert _run(root / "gt", "--to", "coco", "dota", "labelme", "-iw", 10, "-ih", 10,
                "-o", root / "out").exit_code == 0
    good = _run(root / "out", "--verify")
    assert good.exit_code == 0 and "out: 2 frames, 2 boxes, 3 formats (coco, dota, labelme)\n" in good.output
    coco_path = root / "out" / "coco_annotations_obb.json"
    coco = json.loads(coco_path.read_text())
    coco["annotations"][0]["category_id"] = 2  # frame a's box: class 0 in the other formats
    coco_path.write_text(json.dumps(coco))
    bad = _run(root / "out", "--verify")
    assert bad.exit_code == 1 and "out/a#0: dota class 0 != coco class 1" in bad.output


def test_verify_reads_dota_files_of_the_dota_ext_they_were_written_with(write_labels):
    root = write_labels({"gt/a.txt": TILTED, "names.txt": "car\n"})
    assert _run(root / "gt", "--to", "dota", "--dota_ext", ".lbl", "-o", root / "gt").exit_code == 0
    result = _run(root / "gt", "--verify", "--dota_ext", ".lbl")
    assert result.exit_code == 0 and "gt: 1 frames, 1 boxes, 2 formats (dota, yolo)" in result.output


@pytest.mark.parametrize("files", [{}, {"gt/a.txt": FLAT}, {"gt/a.txt": FLAT, "gt/sub/b.txt": FLAT}])
def test_nothing_to_verify_is_exit_2_not_a_disagreement(write_labels, files, tmp_path):
    (tmp_path / "gt").mkdir(exist_ok=True)
    root = write_labels(files)
    result = _run(root / "gt", "--verify")
    assert result.exit_code == 2, result.output
    assert "nothing to verify" in result.output


def test_a_folder_another_conversion_writes_into_is_refused_before_anything_is_written(write_labels, tmp_path):
    """The lock ``hbb2obb`` holds in its output folders (one name for both commands): a format
    conversion into a folder in use exits 2 naming the holder, and goes through once it is gone."""
    import subprocess
    import sys

    root = write_labels({"gt/a.txt": TILTED})
    out = tmp_path / "out"
    hold = ("import sys\nfrom hbb2obb.io.folder_lock import CONVERSION_LOCK, FolderLock\n"
            "with FolderLock(sys.argv[1], CONVERSION_LOCK, 'conversion'):\n"
            "    print('held', flush=True)\n    sys.stdin.readline()\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = _run(root / "gt", "--to", "dota", "-o", out)
        assert refused.exit_code == 2 and "Traceback" not in refused.output
        assert f"{out} is in use by another conversion (pid {holder.pid} on " in refused.output
        assert _files(out) == [".hbb2obb-convert.lock"]
    finally:
        holder.communicate("\n", timeout=30)
    done = _run(root / "gt", "--to", "dota", "-o", out)
    assert done.exit_code == 0, done.output
    assert _files(out) == [".hbb2obb-written.json", "a.dota"]
