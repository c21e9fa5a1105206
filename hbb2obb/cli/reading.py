"""The reading options of formats that need more than their files: shared by eval, analyze and convert.

Their values reach the readers as :data:`~hbb2obb.io.format_names.READ_OPTIONS`.
"""

from __future__ import annotations

import click

from hbb2obb.io.format_names import COCO_ANGLES, READ_OPTIONS

split_option = click.option(
    "--split", default=READ_OPTIONS["split"], show_default=True, metavar="NAME",
    help="The split an Ultralytics dataset YAML given as the labels stands for (its train, val or test entry).")

coco_angle_option = click.option(
    "--coco_angle", type=click.Choice(COCO_ANGLES),
    help="COCO files whose bbox has five numbers [cx, cy, w, h, angle]: the angle's unit and the way a positive "
         "angle turns the box on screen (deg_ccw: Detectron2; rad_cw: Ultralytics, mmrotate). Such a file is "
         "refused without it.")
