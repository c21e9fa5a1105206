"""The label formats the commands read, by name: a module of its own so ``--gt_format``'s choices cost no import.

:mod:`hbb2obb.io.label_sets` reads and writes them; the command line only needs their names to
declare its options, and a plain ``hbb2obb-eval`` run reads no format but the ``.txt`` folders
(importing :mod:`~hbb2obb.io.label_sets` and its COCO, LabelMe and frame-label modules would be
a noticeable share of a small run's start-up).
"""

#: Every format name, in the order a folder holding several is read (the first found wins).
ALL_FORMATS = ("yolo", "dota", "voc", "coco", "labelme")
