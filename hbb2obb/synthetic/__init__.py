"""Generated data with known errors in it, for ``make demo``, the tests and the benchmarks.

* :mod:`~hbb2obb.synthetic.scene`: what a frame is made of (vehicles, roads).
* :mod:`~hbb2obb.synthetic.dataset`: the label folders and the simulated conversion.
* :mod:`~hbb2obb.synthetic.render`: the top-down image of a frame.

``python -m hbb2obb.synthetic OUT_DIR --frames 8 --seed 0`` writes a data set from the shell.
"""
