"""Small image operations on 2-D numpy arrays.

Binary morphology with square structuring elements and connected-component labelling (both
OpenCV's, behind the same functions and with the same results as the numpy code they
replaced: they run on every candidate mask of every box, where numpy's whole-array passes
cost several times more), a deterministic k-means for colour models, and the GrabCut-style
foreground model. Everything takes and returns numpy arrays;
masks are boolean ``(h, w)`` arrays.
"""

from __future__ import annotations

import numpy as np


def _square(size: int):
    """OpenCV and a ``size x size`` kernel of ones."""
    import cv2  # imported here: the commands that never segment do not pay for loading OpenCV

    return cv2, np.ones((size, size), dtype=np.uint8)


def erode(mask: np.ndarray, size: int) -> np.ndarray:
    """Binary erosion by a ``size x size`` square; pixels outside the array count as False.

    An even ``size`` reaches ``size // 2`` pixels up and left, one fewer down and right.
    OpenCV's ``erode`` (the same result as the separable running sums in numpy it replaced, for
    less; its default border would count the outside as True, hence the explicit zero).

    Examples
    --------
    >>> m = np.zeros((5, 5), bool); m[1:4, 1:4] = True
    >>> int(erode(m, 3).sum()), int(erode(m, 1).sum())
    (1, 9)
    """
    return _morphology("erode", mask, size)


def dilate(mask: np.ndarray, size: int) -> np.ndarray:
    """Binary dilation by a ``size x size`` square (the window :func:`erode` uses); OpenCV's ``dilate``.

    Examples
    --------
    >>> m = np.zeros((5, 5), bool); m[2, 2] = True
    >>> int(dilate(m, 3).sum())
    9
    """
    return _morphology("dilate", mask, size)


def _morphology(name: str, mask: np.ndarray, size: int) -> np.ndarray:
    """OpenCV's ``erode`` or ``dilate`` (``name``) of a boolean mask by a ``size x size`` square, outside = False."""
    mask = np.asarray(mask, dtype=bool)
    if size <= 1 or mask.size == 0:
        return mask.copy()
    cv2, kernel = _square(size)
    pixels = np.ascontiguousarray(mask).view(np.uint8)
    return getattr(cv2, name)(pixels, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0).view(bool)


def opening(mask: np.ndarray, size: int) -> np.ndarray:
    """Erosion then dilation: removes parts thinner than ``size`` (specks, thin protrusions)."""
    return dilate(erode(mask, size), size)


def closing(mask: np.ndarray, size: int) -> np.ndarray:
    """Dilation then erosion: fills gaps and holes narrower than ``size``.

    The mask is padded by ``size`` before closing so that objects touching the border are not
    eaten from outside.
    """
    mask = np.asarray(mask, dtype=bool)
    if size <= 1 or mask.size == 0:
        return mask.copy()
    padded = np.pad(mask, size, mode="edge")
    return erode(dilate(padded, size), size)[size:-size, size:-size]


def morphology(mask: np.ndarray, kernel_percentage: float) -> np.ndarray:
    """Opening (``kernel_percentage > 0``) or closing (``< 0``) with a square kernel.

    The kernel side is ``|kernel_percentage|`` times the smaller side of the mask's bounding
    box, rounded down, made odd and at least 3, as the reference converter does; 0 (or an
    empty mask) returns the mask unchanged.

    Examples
    --------
    >>> m = np.zeros((20, 40), bool); m[5:15, 5:35] = True; m[10, 35:39] = True  # a thin spur
    >>> int(morphology(m, 0.3).sum()), int(morphology(m, 0).sum())
    (300, 304)
    """
    mask = np.asarray(mask, dtype=bool)
    if kernel_percentage == 0 or not mask.any():
        return mask.copy()
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    smaller = min(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)
    size = max(3, int(smaller * abs(kernel_percentage)) | 1)
    return opening(mask, size) if kernel_percentage > 0 else closing(mask, size)


def label_components(mask: np.ndarray, connectivity: int = 8) -> tuple[np.ndarray, int]:
    """Connected components of a boolean mask.

    OpenCV's ``connectedComponentsWithAlgorithm`` with the pixel-scanning SAUF algorithm, whose
    labels are numbered in raster order of each component's first pixel (the union-find over
    horizontal runs in numpy it replaced gave the same labels, at a higher cost).

    Parameters
    ----------
    mask : ndarray of bool, shape (h, w)
    connectivity : {4, 8}

    Returns
    -------
    labels : ndarray of int, shape (h, w)
        0 for background, 1..n for the components in raster order of their first pixel.
    n : int

    Examples
    --------
    >>> labels, n = label_components(np.array([[1, 0, 1], [0, 0, 1], [1, 0, 0]], bool), 8)
    >>> n, labels.tolist()
    (3, [[1, 0, 2], [0, 0, 2], [3, 0, 0]])
    >>> label_components(np.array([[1, 0], [0, 1]], bool), 4)[1]
    2
    """
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity must be 4 or 8, got {connectivity}")
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"label_components needs a 2-D mask, got shape {mask.shape}")
    if mask.size == 0:
        return np.zeros(mask.shape, dtype=np.int32), 0
    import cv2

    count, labels = cv2.connectedComponentsWithAlgorithm(np.ascontiguousarray(mask).view(np.uint8), connectivity,
                                                         cv2.CV_32S, cv2.CCL_SAUF)
    return labels, count - 1


def _nearest(samples: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre of every sample, by one matrix product.

    ``|x - c|^2 = |x|^2 - 2 x.c + |c|^2`` and ``|x|^2`` is the same for every centre, so the
    nearest centre is the one with the least ``|c|^2 - 2 x.c``: no sample norms needed.
    """
    scores = samples @ (-2.0 * centres.T)
    scores += (centres * centres).sum(1)[None, :]
    return scores.argmin(1)


def kmeans(samples: np.ndarray, k: int, iterations: int = 8, fit_every: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic k-means: centres start at brightness quantiles, then Lloyd steps.

    Parameters
    ----------
    samples : ndarray, shape (n, d)
    k : int
        Number of clusters; fewer are returned when there are fewer distinct samples.
    iterations : int
        Most Lloyd steps; stops early when no centre moves.
    fit_every : int
        Fit the centres on every ``fit_every``-th sample only (all samples are assigned).

    Returns
    -------
    centres : ndarray, shape (k', d)
    assignment : ndarray of int, shape (n,)
        Index of the nearest centre of every sample.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> c, a = kmeans(x, 2)
    >>> c.ravel().tolist(), a.tolist()
    ([0.5, 10.5], [0, 0, 1, 1])
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2:
        raise ValueError(f"samples must have shape (n, d), got {samples.shape}")
    if len(samples) == 0:
        return np.zeros((0, samples.shape[1])), np.zeros(0, dtype=np.int64)
    fit = np.ascontiguousarray(samples[::max(1, int(fit_every))])  # a strided view is copied by every product
    n = len(fit)
    order = np.argsort(fit.sum(axis=1), kind="stable")
    starts = fit[order[((np.arange(k) + 0.5) / k * n).astype(int)]]
    starts = starts[np.lexsort(starts.T[::-1])]  # np.unique(axis=0): sorted rows, repeats dropped
    centres = starts[np.concatenate([[True], (starts[1:] != starts[:-1]).any(axis=1)])]
    for _ in range(iterations):
        assignment = _nearest(fit, centres)
        counts = np.bincount(assignment, minlength=len(centres))
        sums = np.stack([np.bincount(assignment, weights=fit[:, d], minlength=len(centres))
                         for d in range(fit.shape[1])], 1)
        used = counts > 0
        moved = sums[used] / counts[used, None]
        if used.all() and np.abs(moved - centres).max() < 1e-6:
            break
        centres = moved
    return centres, _nearest(samples, centres)


def neighbour_sum(values: np.ndarray) -> np.ndarray:
    """Sum over the 8 neighbours of every pixel of a 2-D array; outside counts as the edge value.

    Examples
    --------
    >>> neighbour_sum(np.ones((3, 3))).tolist()[1]
    [8.0, 8.0, 8.0]
    """
    values = np.asarray(values)
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    if values.ndim != 2:
        raise ValueError(f"neighbour_sum needs a 2-D array, got shape {values.shape}")
    if values.size == 0:
        return values.copy()
    # Pad by one repeated edge pixel, then two sums of three shifted views (rows, then columns):
    # five passes over the array where differences of neighbours took nine.
    height, width = values.shape
    padded = np.empty((height + 2, width + 2), dtype=values.dtype)
    padded[1:-1, 1:-1] = values
    padded[0, 1:-1], padded[-1, 1:-1] = values[0], values[-1]
    padded[:, 0], padded[:, -1] = padded[:, 1], padded[:, -2]
    rows = padded[:-2] + padded[1:-1]
    rows += padded[2:]
    total = rows[:, :-2] + rows[:, 1:-1]
    total += rows[:, 2:]
    total -= values
    return total


def _sigmoid(x: np.ndarray, out: np.ndarray = None) -> np.ndarray:
    half = np.multiply(x, 0.5, out=out)  # computed in place from here on: no temporaries
    np.tanh(half, out=half)
    np.multiply(half, 0.5, out=half)
    return np.add(half, 0.5, out=half)


def foreground_log_odds(assignment: np.ndarray, prior: np.ndarray, *, rounds: int = 2,
                        smoothing_steps: int = 5, coupling: float = 0.5,
                        pseudo_count: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel log-odds of foreground from colour clusters and a prior, GrabCut-style.

    Every round estimates how often each colour cluster occurs in the foreground and in the
    background (pixels weighted by their current foreground probability), so a cluster's
    evidence is the log ratio of the two frequencies; the posterior then adds the prior and is
    smoothed by a few mean-field steps of an Ising coupling between 8-neighbours (a cheap
    stand-in for a graph cut: isolated pixels follow their neighbourhood).

    Parameters
    ----------
    assignment : ndarray of int, shape (h, w)
        Colour cluster of every pixel (e.g. from :func:`kmeans`).
    prior : ndarray, shape (h, w)
        Prior log-odds of foreground; very negative where the object cannot be.
    rounds : int
        Re-estimations of the colour evidence after the first.
    smoothing_steps : int
        Mean-field steps per round; 0 turns smoothing off.
    coupling : float
        Weight of the neighbours' mean label (in [-1, 1] each) in a pixel's log-odds.
    pseudo_count : float
        Added to every cluster count, so unseen clusters carry no strong evidence.

    Returns
    -------
    posterior : ndarray, shape (h, w)
        Log-odds of foreground after the last round.
    evidence : ndarray, shape (h, w)
        The colour evidence alone (no prior, no smoothing) of the last round.

    Examples
    --------
    >>> clusters = np.array([[0, 0, 1, 1]] * 4)
    >>> prior = np.array([[-3.0, -3.0, 1.0, 1.0]] * 4)
    >>> post, evidence = foreground_log_odds(clusters, prior)
    >>> bool((post[:, 2:] > 0).all() and (post[:, :2] < 0).all()), bool(evidence[0, 2] > 0)
    (True, True)
    """
    assignment = np.asarray(assignment)
    prior = np.asarray(prior, dtype=np.float32)  # single precision: plenty for log-odds, half the memory
    flat = assignment.reshape(-1)
    k = int(flat.max()) + 1 if flat.size else 1
    # The mean-field steps need only the spins 2 q - 1 = tanh(x / 2) of the log-odds x, so they
    # run on half log-odds (one tanh per step, no sigmoid), and the clusters' foreground and
    # background weights are (n + sum of spins) / 2 and (n - sum of spins) / 2: one bincount.
    spins = np.tanh(prior * np.float32(0.5))
    counts = np.bincount(flat, minlength=k).astype(np.float64)
    evidence = np.zeros_like(prior)
    half_coupling = np.float32(0.5 * coupling)
    for _ in range(rounds + 1):
        spin_sums = np.bincount(flat, weights=spins.reshape(-1), minlength=k)
        fg = 0.5 * (counts + spin_sums) + pseudo_count
        bg = 0.5 * (counts - spin_sums) + pseudo_count
        cluster_evidence = (np.log(fg / fg.sum()) - np.log(bg / bg.sum())).astype(np.float32)
        evidence = cluster_evidence[assignment]
        half_unary = evidence + prior
        half_unary *= np.float32(0.5)
        spins = np.tanh(half_unary)
        for _ in range(smoothing_steps):
            field = neighbour_sum(spins)
            field *= half_coupling
            field += half_unary
            spins = np.tanh(field, out=field)
    q = np.multiply(spins, 0.5, out=spins)
    q += 0.5
    q = np.clip(q.astype(np.float64), 1e-9, 1.0 - 1e-9)
    return np.log(q) - np.log1p(-q), evidence.astype(np.float64)


def select_components(mask: np.ndarray, inside: np.ndarray, *, min_inside: float = 0.8,
                      min_size: float = 0.03, parts_inside: np.ndarray = None) -> np.ndarray:
    """The parts of a mask that make up one object inside a box.

    Keeps the component with the most pixels inside the box, plus every other component that
    lies mostly inside it (share ``min_inside``) and is not a speck (at least ``min_size`` of
    the box's pixels): an object split by dark windows or a lane mark stays whole, a neighbour
    reaching in from outside is dropped.

    Parameters
    ----------
    mask, inside : ndarray of bool, shape (h, w)
        Foreground pixels, and the pixels of the box the object is expected in.
    parts_inside : ndarray of bool, shape (h, w), optional
        Where the other parts must lie mostly (default ``inside``): a tight HBB's corners lie
        outside its diagonal object, and a neighbour's corner reaching into them is no part of it.

    Returns
    -------
    ndarray of bool, shape (h, w)
        The kept pixels (all False when the mask is empty).

    Examples
    --------
    >>> m = np.array([[1, 1, 0, 0, 1], [1, 1, 0, 0, 1], [0, 0, 0, 0, 1]], bool)
    >>> box = np.zeros_like(m); box[:, :4] = True
    >>> select_components(m, box).astype(int).tolist()
    [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]]
    """
    labels, n = label_components(mask)
    if n == 0:
        return np.zeros_like(mask, dtype=bool)
    flat = labels.reshape(-1)
    size = np.bincount(flat, minlength=n + 1)[1:]
    within = np.bincount(flat, weights=np.asarray(inside, dtype=np.float64).reshape(-1), minlength=n + 1)[1:]
    if parts_inside is not None:
        part_within = np.bincount(flat, weights=np.asarray(parts_inside, dtype=np.float64).reshape(-1),
                                  minlength=n + 1)[1:]
    else:
        part_within = within
    keep = (part_within >= min_inside * size) & (size >= min_size * max(1, int(np.count_nonzero(inside))))
    keep[int(np.argmax(within))] = True
    return np.concatenate([[False], keep])[labels]  # label 0 (background) is never kept
