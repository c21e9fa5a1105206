"""Frames: which label files a run scores, paired by name, and their boxes read and repaired.

* :mod:`~hbb2obb.frames.pairing`: pairing files by name, before any is read.
* :mod:`~hbb2obb.frames.loading`: loading the frames of a plan, boxes repaired.
* :mod:`~hbb2obb.frames.batches`: label files read a group at a time and cut into chunks.
"""
