"""Did A beat B? The paired comparison of two converted sets on the same ground truth.

Both sets are scored on the same ground-truth boxes, so their IoUs are paired: box by box, most
of the spread (small boxes, occluded boxes) is shared, and the difference of the means has a
much smaller error than two independent SEMs suggest. Everything here is over the ground-truth
boxes *both* sets matched; a box matched by one set only is counted apart.

* :func:`align_ground_truth`: which row of B's table is each ground-truth row of A's.
* :func:`paired_difference`: mean IoU difference, paired SE, bootstrap interval, wins/losses/
  ties, angle p90 difference and its interval, and a verdict in words.
* :func:`compare_cuts`: the same for every group of every cut, the verdicts Holm-adjusted as one
  family per measure.

A verdict is only drawn from a group of at least :data:`MIN_PAIRED_BOXES` boxes: below that a
bootstrap interval describes the few boxes drawn, not the method. An angle p90 interval wider
than the larger of the two p90s says the tail holds too few boxes to place the p90 (a resample
that draws one more outlier moves it by tens of degrees); it is marked unusable and draws no
verdict. Across the groups of many cuts, some interval excludes 0 by chance alone; Holm's step-down
adjustment of the bootstrap p-values keeps the chance of even one false "better" at 5%.
"""

from __future__ import annotations

import math
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence

import numpy as np

from hbb2obb.analysis.cuts import Cut
from hbb2obb.scoring.evaluate import MatchTable

TIE_TOLERANCE = 1e-9  # IoUs closer than this are the same score (float noise of equal boxes)
BOOTSTRAP_CELLS = 4_000_000  # resampled values held in memory at once
CONFIDENCE = 0.95
WINDOW_SIGMAS = 6.0  # half-width of a percentile's rank window, in binomial standard deviations
MIN_PAIRED_BOXES = 10  # fewer boxes both matched: numbers are reported, no verdict is drawn
TOO_FEW, UNUSABLE, NOISE, HOLM_NOISE = (
    "too few boxes",
    "interval unusable",
    "within the noise",
    "within the noise (Holm)",
)


def align_ground_truth(table_a: MatchTable, table_b: MatchTable) -> np.ndarray:
    """For each ground-truth row of ``table_a``, the row of ``table_b`` holding the same box.

    Rows are the same box when frame name and line number agree (both tables read the same
    ground-truth folder; frames one side skipped simply have no counterpart).

    Returns
    -------
    (n_a,) int64
        Row index into ``table_b.gt``, ``-1`` where B has no such row.
    """
    out = np.full(len(table_a.gt), -1, dtype=np.int64)
    if not len(table_a.gt) or not len(table_b.gt):
        return out
    a_index = {name: i for i, name in enumerate(table_a.frame_names)}
    b_to_a = np.array([a_index.get(name, -1) for name in table_b.frame_names], dtype=np.int64)
    b_frame = b_to_a[table_b.gt_frame]
    stride = int(max(table_a.gt.line.max(), table_b.gt.line.max())) + 1
    key_a = table_a.gt_frame * stride + table_a.gt.line
    key_b = np.where(b_frame >= 0, b_frame * stride + table_b.gt.line, -1)
    order = np.argsort(key_b, kind="stable")
    position = np.searchsorted(key_b[order], key_a)
    position = np.minimum(position, len(order) - 1)
    found = key_b[order][position] == key_a
    out[found] = order[position[found]]
    return out


def _verdict(low: float, high: float, lower_is_better: bool) -> str:
    if low <= 0.0 <= high:
        return NOISE
    a_ahead = high < 0.0 if lower_is_better else low > 0.0
    return "A better" if a_ahead else "B better"


def bootstrap_p_value(resampled: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "the difference is 0": twice the smaller tail beyond 0.

    Counted as ``(k + 1) / (B + 1)``, so it is never 0 with finitely many resamples, and it is
    below 0.05 about when the 95% percentile interval excludes 0.

    Examples
    --------
    >>> bootstrap_p_value(np.array([0.1, 0.2, 0.3]))
    0.5
    >>> bootstrap_p_value(np.zeros(9))
    1.0
    """
    resampled = np.asarray(resampled, dtype=np.float64)
    tail = min(np.count_nonzero(resampled <= 0.0), np.count_nonzero(resampled >= 0.0))
    return float(min(1.0, 2.0 * (tail + 1) / (resampled.size + 1)))


def holm_adjust(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values: a family of tests at family-wise error ``alpha`` rejects
    where the adjusted p is below ``alpha``.

    The ``i``-th smallest p is multiplied by ``m - i + 1`` (``m`` tests), capped at 1, and made
    non-decreasing in the order of the raw p-values.

    Examples
    --------
    >>> holm_adjust([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> holm_adjust([]).tolist()
    []
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def p90_interval_usable(p90_a: float, p90_b: float, interval) -> bool:
    """Whether a bootstrap interval of a p90 difference locates it: no wider than the larger p90.

    Examples
    --------
    >>> p90_interval_usable(4.02, 6.09, [-76.40, -0.55]), p90_interval_usable(3.6, 3.9, [-1.29, 0.19])
    (False, True)
    """
    return bool(interval[1] - interval[0] <= max(abs(p90_a), abs(p90_b)))


class _ResampledPercentile:
    """The ``q``-th percentile of bootstrap resamples of ``values``, without sorting each resample.

    A resample is a multiset of the values, so its order statistics are values of the data
    sorted once. ``np.percentile`` (method 'linear') interpolates between the order statistics
    ``lower`` and ``upper`` of the resample; both almost surely have a rank in the data within a
    few binomial standard deviations of ``q`` percent, the *window*. Per resample it is enough to
    count the picks ranked below the window and to sort the few picks inside it; a resample
    whose order statistics fall outside the window (rarer than one in 10^8) is partitioned in full.
    """

    def __init__(self, values: np.ndarray, q: float):
        n = values.size
        order = np.argsort(values, kind="stable")
        self.sorted = values[order]
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[order] = np.arange(n)
        # numpy's virtual index, neighbours and weight for method 'linear', step for step
        virtual = (n - 1) * (q / 100)
        if virtual >= n - 1:
            self.lower = self.upper = n - 1
            self.gamma = virtual + 1.0  # numpy takes index -1 as the floor here
        else:
            self.lower = math.floor(virtual)
            self.upper = self.lower + 1
            self.gamma = virtual - self.lower
        p = q / 100
        margin = math.ceil(WINDOW_SIGMAS * math.sqrt(n * p * (1 - p))) + 8
        self.start = max(0, self.lower - margin)
        self.stop = min(n, self.upper + 1 + margin)
        self.below = self.rank < self.start
        self.inside = (self.rank >= self.start) & (self.rank < self.stop)

    def interpolate(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """numpy's ``_lerp``, the same floating-point operations in the same order."""
        step = high - low
        if self.gamma >= 0.5:
            return high - step * (1 - self.gamma)
        return low + step * self.gamma

    def of_resamples(self, picks: np.ndarray, n_below: np.ndarray, flat_rows: np.ndarray,
                     flat_boxes: np.ndarray) -> np.ndarray:
        """The percentile of each row of ``picks``.

        ``n_below`` counts each row's picks ranked below the window; ``flat_rows``, ``flat_boxes``
        list (row-major) every pick that may be inside the window, with its row.
        """
        rows, n = picks.shape
        inside = self.inside[flat_boxes]
        row_of = flat_rows[inside]
        keys = row_of * n + self.rank[flat_boxes[inside]]  # row-major, by rank within a row
        keys.sort()
        count = np.bincount(row_of, minlength=rows)
        first = np.cumsum(count) - count
        low_at, high_at = self.lower - n_below, self.upper - n_below
        found = (low_at >= 0) & (high_at < count)
        row_base = np.arange(rows, dtype=np.int64) * n
        low_rank = np.zeros(rows, dtype=np.int64)
        high_rank = np.zeros(rows, dtype=np.int64)
        low_rank[found] = keys[(first + low_at)[found]] - row_base[found]
        high_rank[found] = keys[(first + high_at)[found]] - row_base[found]
        low, high = self.sorted[low_rank], self.sorted[high_rank]
        for row in np.flatnonzero(~found):
            resample = np.partition(self.sorted[self.rank[picks[row]]], [self.lower, self.upper])
            low[row], high[row] = resample[self.lower], resample[self.upper]
        return self.interpolate(low, high)


def _bootstrap_by_gathering(iou_diff, angle_a, angle_b, picks_of):
    """The plain bootstrap: gather every resample, take its mean and percentiles."""
    means, p90s = [], []
    for picks in picks_of:
        means.append(iou_diff[picks].mean(axis=1))
        p90s.append(np.percentile(angle_a[picks], 90, axis=1) - np.percentile(angle_b[picks], 90, axis=1))
    return means, p90s


def _bootstrap(iou_diff: np.ndarray, angle_a: np.ndarray, angle_b: np.ndarray, n_boot: int, seed: int):
    """Bootstrap distributions of the mean IoU difference and the angle p90 difference.

    Resample ``r`` is row ``r`` of ``rng.integers(0, n, size=(n_boot, n))`` (drawn in batches,
    which yields the same numbers). Its mean is the sum of the gathered differences over ``n``,
    as ``np.mean`` computes it, and its p90 differences are those of ``np.percentile``, bit for
    bit, read through :class:`_ResampledPercentile` (non-finite angles, whose percentiles follow
    numpy's NaN rules, take the plain gather-and-percentile path).
    """
    rng = np.random.default_rng(seed)
    n = iou_diff.size
    batch = max(1, BOOTSTRAP_CELLS // n)
    picks_of = (rng.integers(0, n, size=(min(batch, n_boot - start), n)) for start in range(0, n_boot, batch))
    finite = bool(np.isfinite(angle_a).all() and np.isfinite(angle_b).all())
    if not finite:
        means, p90s = _bootstrap_by_gathering(iou_diff, angle_a, angle_b, picks_of)
        return np.concatenate(means), np.concatenate(p90s)
    # Every resample of a constant is that constant, and the same angles on both sides give
    # a p90 difference of exactly 0 in every resample (A compared with itself, say).
    if iou_diff.min() == iou_diff.max() and np.array_equal(angle_a, angle_b):
        return np.full(n_boot, np.full((1, n), iou_diff[0]).mean(axis=1)[0]), np.zeros(n_boot)
    p90_a, p90_b = _ResampledPercentile(angle_a, 90), _ResampledPercentile(angle_b, 90)
    # one byte per box: bit 0 below A's window, bit 1 below B's, bit 2 inside either window
    code = (p90_a.below.view(np.uint8) | (p90_b.below.view(np.uint8) << 1)
            | ((p90_a.inside | p90_b.inside).view(np.uint8) << 2))

    def summarise(picks):
        mean = np.take(iou_diff, picks).sum(axis=1) / n
        codes = np.take(code, picks)
        flat = np.flatnonzero(codes >= 4)
        flat_rows, flat_boxes = flat // n, picks.ravel()[flat]
        below_a = np.count_nonzero((codes & 1).view(bool), axis=1)
        below_b = np.count_nonzero(codes & 2, axis=1)
        return mean, (p90_a.of_resamples(picks, below_a, flat_rows, flat_boxes)
                      - p90_b.of_resamples(picks, below_b, flat_rows, flat_boxes))

    # Drawing (sequential: one random stream) overlaps with summarising earlier batches on a
    # second thread; both run in numpy with the GIL released. At most two batches wait.
    done, waiting = [], deque()
    with ThreadPoolExecutor(max_workers=1) as pool:
        for picks in picks_of:
            waiting.append(pool.submit(summarise, picks))
            if len(waiting) > 2:
                done.append(waiting.popleft().result())
        done.extend(batch.result() for batch in waiting)
    means, p90s = zip(*done)
    return np.concatenate(means), np.concatenate(p90s)


def paired_difference(iou_a, iou_b, angle_a, angle_b, *, seed: int = 0, n_boot: int = 2000,
                      min_boxes: int = MIN_PAIRED_BOXES) -> dict:
    """A minus B over aligned pairs of scores of the same ground-truth boxes.

    Parameters
    ----------
    iou_a, iou_b, angle_a, angle_b : (n,) array_like
        IoU and orientation error of each box under A and under B.
    seed : int
        Seed of the bootstrap: the same seed gives the same intervals.
    n_boot : int
        Bootstrap resamples (boxes drawn with replacement, pairs kept together).
    min_boxes : int
        Fewer pairs than this draw no verdict (``"too few boxes"``); the numbers are still given.

    Returns
    -------
    dict
        ``boxes``; ``iou_a``, ``iou_b``, ``iou_diff`` (mean of A − B); ``paired_se`` (sample
        standard deviation of the per-box differences over ``sqrt(n)``); ``independent_se``
        (what two independent SEMs would claim); ``iou_ci`` (95% percentile bootstrap interval);
        ``wins``, ``losses``, ``ties`` (boxes where A's IoU is higher, lower, equal within
        1e-9); ``p90_a``, ``p90_b``, ``p90_diff`` and ``p90_ci`` (angle p90, degrees, lower is
        better); ``iou_p`` and ``p90_p`` (two-sided bootstrap p-values, :func:`bootstrap_p_value`);
        ``p90_ci_usable`` (:func:`p90_interval_usable`); ``iou_verdict`` and ``angle_verdict``:
        ``"A better"``, ``"B better"``, ``"within the noise"`` (the interval holds 0), ``"too few
        boxes"`` (fewer than ``min_boxes``), ``"interval unusable"`` (angle only), ``"no pairs"``
        when ``n`` is 0.

    Examples
    --------
    >>> d = paired_difference([0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [1, 2, 3], [1, 2, 3], n_boot=200, min_boxes=3)
    >>> round(d["iou_diff"], 6), d["paired_se"] < 1e-12, d["wins"], d["iou_verdict"]
    (0.1, True, 3, 'A better')
    >>> paired_difference([0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [1, 2, 3], [1, 2, 3], n_boot=200)["iou_verdict"]
    'too few boxes'
    """
    iou_a, iou_b = np.asarray(iou_a, dtype=np.float64), np.asarray(iou_b, dtype=np.float64)
    angle_a, angle_b = np.asarray(angle_a, dtype=np.float64), np.asarray(angle_b, dtype=np.float64)
    n = int(iou_a.size)
    if n == 0:
        return dict(boxes=0, iou_a=0.0, iou_b=0.0, iou_diff=0.0, paired_se=0.0, independent_se=0.0,
                    iou_ci=[0.0, 0.0], wins=0, losses=0, ties=0, p90_a=0.0, p90_b=0.0, p90_diff=0.0,
                    p90_ci=[0.0, 0.0], iou_p=1.0, p90_p=1.0, p90_ci_usable=False,
                    iou_verdict="no pairs", angle_verdict="no pairs")
    diff = iou_a - iou_b
    ddof = 1 if n > 1 else 0
    root_n = math.sqrt(n)
    boot_mean, boot_p90 = _bootstrap(diff, angle_a, angle_b, n_boot, seed)
    tails = [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2]
    iou_ci = [float(v) for v in np.percentile(boot_mean, tails)]
    p90_ci = [float(v) for v in np.percentile(boot_p90, tails)]
    p90_a, p90_b = float(np.percentile(angle_a, 90)), float(np.percentile(angle_b, 90))
    usable = p90_interval_usable(p90_a, p90_b, p90_ci)
    if n < min_boxes:
        iou_verdict = angle_verdict = TOO_FEW
    else:
        iou_verdict = _verdict(*iou_ci, lower_is_better=False)
        angle_verdict = _verdict(*p90_ci, lower_is_better=True) if usable else UNUSABLE
    return dict(
        boxes=n,
        iou_a=float(iou_a.mean()),
        iou_b=float(iou_b.mean()),
        iou_diff=float(diff.mean()),
        paired_se=float(diff.std(ddof=ddof) / root_n),
        independent_se=float(math.hypot(iou_a.std(ddof=ddof), iou_b.std(ddof=ddof)) / root_n),
        iou_ci=iou_ci,
        wins=int(np.count_nonzero(diff > TIE_TOLERANCE)),
        losses=int(np.count_nonzero(diff < -TIE_TOLERANCE)),
        ties=int(np.count_nonzero(np.abs(diff) <= TIE_TOLERANCE)),
        p90_a=p90_a,
        p90_b=p90_b,
        p90_diff=p90_a - p90_b,
        p90_ci=p90_ci,
        iou_p=bootstrap_p_value(boot_mean),
        p90_p=bootstrap_p_value(boot_p90),
        p90_ci_usable=usable,
        iou_verdict=iou_verdict,
        angle_verdict=angle_verdict,
    )


def compare_cuts(table_a: MatchTable, table_b: MatchTable, cuts: Sequence[Cut], *, seed: int = 0,
                 n_boot: int = 2000, b_rows: Optional[np.ndarray] = None,
                 min_boxes: int = MIN_PAIRED_BOXES) -> dict:
    """:func:`paired_difference` overall and for every group of every cut, as plain data.

    The cuts are masks over ``table_a``'s ground-truth rows (the ground truth is the same, so
    its properties are too). Each group is bootstrapped with the same ``seed``, so a group's
    interval does not depend on which other groups were asked for. Its *verdict* does: the
    verdicts of all distinct groups (overall included) with at least ``min_boxes`` boxes are one
    family per measure (mean IoU; angle p90 where its interval is usable), and a "better" stands
    only where its Holm-adjusted p-value (:func:`holm_adjust`) is below 5%; one whose interval
    excludes 0 but whose adjusted p does not becomes ``"within the noise (Holm)"``.

    Returns
    -------
    dict
        ``overall`` (a :func:`paired_difference` dict, with ``iou_p_holm`` and ``p90_p_holm``
        where it is in a family), ``cuts`` (``key``, ``title``, ``groups`` of ``{"label", ...}``),
        ``matched_by_a_only``, ``matched_by_b_only``, ``family`` (``min_boxes``, ``method``,
        the sizes ``iou_tests`` and ``angle_tests``).
    """
    b_rows = align_ground_truth(table_a, table_b) if b_rows is None else b_rows
    b_matched = np.zeros(len(table_a.gt), dtype=bool)
    present = b_rows >= 0
    b_matched[present] = table_b.matched[b_rows[present]]
    both = table_a.matched & b_matched
    b_iou = np.full(len(table_a.gt), np.nan)
    b_angle = np.full(len(table_a.gt), np.nan)
    b_iou[both] = table_b.iou[b_rows[both]]
    b_angle[both] = table_b.angle_error[b_rows[both]]

    done: dict[bytes, dict] = {}

    def group_key(mask: np.ndarray) -> bytes:
        rows = mask & both
        key = np.packbits(rows).tobytes()  # two cuts may hold the same group: bootstrap it once
        if key not in done:
            done[key] = paired_difference(table_a.iou[rows], b_iou[rows], table_a.angle_error[rows],
                                          b_angle[rows], seed=seed, n_boot=n_boot, min_boxes=min_boxes)
        return key

    overall_key = group_key(np.ones(len(table_a.gt), dtype=bool))
    cut_keys = [[group_key(mask) for mask in cut.masks] for cut in cuts]
    family = _holm_verdicts(list(done.values()))

    def out(key: bytes) -> dict:
        result = done[key]
        return {**result, "iou_ci": list(result["iou_ci"]), "p90_ci": list(result["p90_ci"])}

    return {
        "seed": int(seed),
        "bootstrap": int(n_boot),
        "matched_by_a_only": int((table_a.matched & ~b_matched).sum()),
        "matched_by_b_only": int((~table_a.matched & b_matched).sum()),
        "family": {"min_boxes": int(min_boxes), "method": "holm", **family},
        "overall": out(overall_key),
        "cuts": [
            {"key": cut.key, "title": cut.title,
             "groups": [{"label": label, **out(key)} for label, key in zip(cut.labels, keys)]}
            for cut, keys in zip(cuts, cut_keys)
        ],
    }


def _holm_verdicts(results: list) -> dict:
    """Holm-adjust the verdicts of distinct groups in place, one family per measure; the family sizes."""
    sizes = {}
    for measure, p_key, verdict_key in (
        ("iou_tests", "iou_p", "iou_verdict"),
        ("angle_tests", "p90_p", "angle_verdict"),
    ):
        members = [r for r in results if r[verdict_key] in ("A better", "B better", NOISE)]
        adjusted = holm_adjust([r[p_key] for r in members])
        for result, p_holm in zip(members, adjusted.tolist()):
            result[p_key + "_holm"] = p_holm
            if result[verdict_key] != NOISE and not p_holm < 1 - CONFIDENCE:
                result[verdict_key] = HOLM_NOISE
        sizes[measure] = len(members)
    return sizes
