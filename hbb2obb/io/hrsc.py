"""HRSC2016 XML: one ``<HRSC_Image>`` file per frame, ships as rotated boxes (read only).

Each ``HRSC_Objects/HRSC_Object`` gives the rotated box as ``mbox_cx, mbox_cy`` (centre),
``mbox_w, mbox_h`` (size) in pixels and ``mbox_ang`` in radians: the ``w x h`` rectangle around the
centre turned by ``mbox_ang`` clockwise as shown on screen (image y points down), the rule of the
dataset's loaders (mmrotate's ``HRSCDataset``, angle version ``le90``). The dataset keeps the angle
in ``(-pi/2, pi/2]``; any finite angle is read. Corners are listed from the one at ``(-w/2, -h/2)``
from the centre, clockwise on screen, as for roLabelImg. The class is the object's ``Class_ID``
text (a label map may name those ids); ``difficult`` is kept. The frame size is
``Img_SizeWidth x Img_SizeHeight``, the image ``Img_FileName.Img_FileFmt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from hbb2obb.errors import InputError
from hbb2obb.io.frame_labels import FrameLabels, image_name_of
from hbb2obb.io.rolabelimg import rotated_corners
from hbb2obb.io.voc import parse_with_lines
from hbb2obb.io.xml_labels import FrameBuilder, root_tag, xml_numbers, xml_size

ROTATED = ("mbox_cx", "mbox_cy", "mbox_w", "mbox_h", "mbox_ang")


def sniff(head: bytes) -> bool:
    """Whether an ``.xml`` file's head (its first bytes) opens the root element ``<HRSC_Image>``."""
    return root_tag(head) == "HRSC_Image"


def object_corners(obj) -> tuple[Optional[list], Optional[str]]:
    """An ``<HRSC_Object>``'s corners, or why it has none."""
    values, reason = xml_numbers([obj.findtext(key) for key in ROTATED], ROTATED)
    if reason is not None:
        return None, reason
    cx, cy, w, h, angle = values
    if w < 0 or h < 0:
        return None, f"negative size ({w:g} x {h:g})"
    return rotated_corners(cx, cy, w, h, angle), None


def read(path: str | Path, *, strict: bool, label_map: Optional[dict] = None,
         discovered: Optional[dict] = None) -> FrameLabels:
    """Read one HRSC2016 file (see the module docstring); ``boxes.line`` is each ``<HRSC_Object>``'s line."""
    path = Path(path)
    root, element_line = parse_with_lines(path, "HRSC2016 file")
    if root.tag != "HRSC_Image":
        raise InputError(f"{path}: not an HRSC2016 file (root element <{root.tag}>, expected <HRSC_Image>)")
    frame = FrameBuilder(path, strict, label_map, discovered)
    for obj in root.findall("HRSC_Objects/HRSC_Object"):
        corners, reason = object_corners(obj)
        frame.add(element_line.get(id(obj), 0), obj.findtext("Class_ID") or "", corners, reason,
                  obj.findtext("difficult"))
    name, fmt = ((root.findtext(key) or "").strip() for key in ("Img_FileName", "Img_FileFmt"))
    image_name = image_name_of(f"{name}.{fmt}", path.stem) if name and fmt else None
    return frame.frame(xml_size(root.findtext("Img_SizeWidth"), root.findtext("Img_SizeHeight")), image_name)
