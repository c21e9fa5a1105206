"""The review page of ``hbb2obb-view``: frames, boxes and their matches as a folder a browser opens.

:mod:`~hbb2obb.view.model` gathers what the page shows (from the scoring core's match tables, or
from label sets read whole when there is no ground truth), :mod:`~hbb2obb.view.images` writes the
downscaled frames, :mod:`~hbb2obb.view.page` writes the page and its per-frame data files. The
page itself is plain JavaScript under ``assets/``: nothing is fetched from the network.
"""
