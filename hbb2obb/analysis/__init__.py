"""Analysis: where the score comes from, and whether one conversion beat another.

* :mod:`~hbb2obb.analysis.cuts`: cuts of the matched pairs by properties of the ground truth.
* :mod:`~hbb2obb.analysis.identity_baseline`: the HBB prompt emitted unchanged, scored the same way.
* :mod:`~hbb2obb.analysis.compare`: the paired comparison of two converted sets (``--baseline``).
* :mod:`~hbb2obb.analysis.report`: the analysis as terminal text and markdown.

The figure lives with the other pictures, in :mod:`hbb2obb.plotting.analysis`.
"""
