"""The ``image`` converter: HBB prompts to OBBs from the image pixels alone.

* :mod:`~hbb2obb.converters.image.converter`: the converter, frame by frame.
* :mod:`~hbb2obb.converters.image.params`: every setting, one frozen dataclass passed down.
* :mod:`~hbb2obb.converters.image.box`: one box: segment the window, fit, check.
* :mod:`~hbb2obb.converters.image.fit`: the working window, the orientation hint, the fit.
* :mod:`~hbb2obb.converters.image.scene`: evidence from a whole frame (tightness, neighbours).
* :mod:`~hbb2obb.converters.image.sides`: loose boxes' sides moved out to the dark band.
* :mod:`~hbb2obb.converters.image.segmentation`: small image operations on arrays.
* :mod:`~hbb2obb.converters.image.draw`: pictures of what the converter did.
"""
