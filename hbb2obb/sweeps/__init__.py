"""Sweeps: a converter's parameter grid scored point by point, and benchmarks of several sweeps.

* :mod:`~hbb2obb.sweeps.runner`: expand a grid, score every point, keep results on disk.
* :mod:`~hbb2obb.sweeps.report`: read sweep folders back; ``summary.txt`` and dry-run plans.
* :mod:`~hbb2obb.sweeps.benchmark`: several sweeps from one YAML file, and their documents.
* :mod:`~hbb2obb.sweeps.executors`: grid points in this process or in local processes.
* :mod:`~hbb2obb.sweeps.dask_executor`: grid points on a Dask cluster (``--scheduler``).
* :mod:`~hbb2obb.sweeps.records`: what a record was measured with; sound records and usable output.
* :mod:`~hbb2obb.sweeps.lock`: one sweep per run folder at a time, and its scratch space.
"""
