"""Every setting of the ``image`` converter, in one frozen dataclass.

:class:`ImageParams` holds the converter's public parameters (the ones the registry and the
command line know: ``scale_factor``, ``opening_kernel_percentage``, ``imgsz``, ``corner_radius``,
``tightness``), the switches that turn the frame-level steps on and off, and every tuned number
the steps read. It is passed explicitly from :func:`~hbb2obb.converters.image.converter.convert_boxes`
down to the box, fit, scene and sides functions; nothing reads a module-level setting, so a
measurement or a test changes one with :func:`dataclasses.replace`::

    >>> from dataclasses import replace
    >>> params = replace(ImageParams(), pool_breadths=False)
    >>> params.pool_breadths, ImageParams().pool_breadths
    (False, True)

The numbers' comments say what was measured when they were chosen (mean IoU against the
ground truth unless said otherwise; docs/converter.md has the sets, CHANGELOG.md the history).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from hbb2obb.errors import UsageError

#: How the HBBs relate to the objects' rectangles (see
#: :class:`~hbb2obb.converters.image.converter.ImageConverter`).
TIGHTNESS = ("auto", "tight", "loose")
#: The parameters the converter registry and the command line know, in their order.
PUBLIC_PARAMETERS = ("scale_factor", "opening_kernel_percentage", "imgsz", "corner_radius", "tightness", "margin")


@dataclass(frozen=True)
class ImageParams:
    """The ``image`` converter's parameters, switches and tuned numbers (see the module docstring).

    The first six are the public parameters, documented on
    :class:`~hbb2obb.converters.image.converter.ImageConverter`; the rest are documented where
    they are declared. Below :func:`~hbb2obb.converters.image.converter.convert_boxes`, which
    reads ``"auto"`` tightness from the frame's HBBs, ``tightness`` is ``"tight"`` or ``"loose"``.
    """

    # -- the public parameters
    scale_factor: Union[float, tuple] = 0.0
    opening_kernel_percentage: float = 0.1
    imgsz: int = 96
    corner_radius: float = 0.4
    tightness: str = "auto"
    margin: Union[str, float] = "auto"

    # -- switches of the frame-level steps (on: the converter; off only to measure a step)
    #: Let neighbours' orientations decide where a box's own pixels leave the diagonal open,
    #: refit loose boxes at their class's pooled breadth, rescue tight fallbacks standing in rows
    #: and narrow tight boxes to their side-by-side neighbours.
    scene: bool = True
    #: The self-checks: a box and a class keep their HBBs when their fits follow the image's
    #: edges and colours less well.
    check: bool = True
    #: In a tight frame, cap the breadth of near-45-degree boxes by their side-by-side
    #: neighbours' distance (:func:`~hbb2obb.converters.image.scene.side_by_side_breadths`).
    side_by_side: bool = True
    #: In a loose frame, refit each box at its breadth pooled with its class's
    #: (:func:`~hbb2obb.converters.image.scene.pooled_breadths`).
    pool_breadths: bool = True
    #: In a loose frame, move each fitted side out to the dark band just beyond it
    #: (:func:`~hbb2obb.converters.image.sides.extended_to_bands`).
    extend_to_bands: bool = True

    # -- reading the prompts from the pixels (:mod:`~hbb2obb.converters.image.reading`). The
    # colour edge (a share of the box, negative inside) of the boxes along the axes, generated
    # roads (day, thermal, night; 8 frames each of seeds 303, 307, 305, the tuning sets): tight
    # prompts -0.032 on average (-0.057 to -0.007), corner-cutting -0.019 (-0.034 to +0.021),
    # margins of 2-6% of the object -0.055 (-0.083 to -0.024), of 6-15% -0.090 (-0.117 to
    # -0.049); the same on all three looks (the gradient's edge moved out 0.04 under thermal
    # blur). The slope of the gradient edge from boxes along the axes to diagonal ones: tight
    # prompts -0.12 to -0.07 but for three frames (-0.02 to +0.01), corner-cutting -0.06 to +0.08.
    #: A frame has a margin when the colour edge of its boxes along the axes lies inside this
    #: share of the box ...
    margin_colour_edge: float = 0.045
    #: ... unless the gradient edge of its diagonal boxes lies outside this one: boxes with a
    #: margin leave room at every angle (margins: -0.044 or further inside; Songdo's own
    #: hand-drawn boxes, a little loose along the axes (colour edge -0.051) but cutting the
    #: corners of diagonal cars, -0.018).
    margin_diagonal_edge: float = 0.035
    #: The colour edge of tight prompts (blur, rounding, bodies a little narrower than their
    #: boxes), and how far it moves per share of the box left as room: the room is
    #: ``(-edge - margin_colour_bias) / margin_colour_scale`` (fitted to the tuning sets' averages).
    margin_colour_bias: float = 0.032
    margin_colour_scale: float = 0.66
    #: With too few boxes along the axes for a colour edge (ships of a harbour, all diagonal), a
    #: frame has a margin when the gradient edge of all its boxes lies inside this share of the
    #: box (the earlier rule, kept: margins of 0-15% measured -0.17 to -0.07; the tuning sets'
    #: tight prompts, diagonal boxes, -0.09 to -0.03) ...
    margin_edge: float = 0.05
    #: ... and its room is that edge less this (the outlines of tight prompts end inside).
    margin_bias: float = 0.02
    #: Largest margin read from a frame, as a share of the object's size per side.
    margin_max: float = 0.3
    #: Without a margin, a frame is tight when that slope is below minus this (the generated
    #: roads' own detector-like boxes, corner-cutting, -0.068 to +0.001; -0.064 the steepest
    #: without enough diagonal boxes for their own edge) ...
    tight_slope: float = 0.065
    #: ... and the gradient edge of its diagonal boxes, when it has enough, lies inside this share
    #: of the box (tight prompts -0.031 or further inside, those detector-like boxes -0.022 or
    #: further out); with only diagonal boxes, when their edge lies inside ``tight_edge``.
    tight_diagonal_edge: float = 0.025
    tight_edge: float = 0.06
    #: With a slope, a frame is also tight when the gradient edge of its diagonal boxes lies inside
    #: this share of the box, whatever the slope (its boxes along the axes ending inside too).
    #: Corner-cutting boxes with that edge measured, -0.032 or further out (53 generated frames:
    #: prompts and own HBBs, tuning and held-out seeds; Songdo's 4); the two tight frames whose
    #: slope was too shallow, -0.041 and -0.069 (a third, -0.031, stays loose).
    tight_diagonal_inside: float = 0.037
    #: Diagonal boxes: angles within this many degrees of 45; along the axes: beyond this many.
    diagonal_within: float = 22.0
    axis_beyond: float = 35.0
    #: Fewest boxes for a reading (and in each group compared); most boxes measured per frame.
    reading_min_boxes: int = 3
    reading_boxes: int = 200
    #: Least ratio of the profiles' level inside to their level outside for a reading (a frame
    #: whose objects do not stand out from the ground says nothing about its prompts). Measured:
    #: DOTA's airport frame P0168 1.08 / 1.17 / 1.23 from margin / tight / corner-cutting prompts
    #: of the same planes, whose edge lies 0.08-0.18 inside whatever the prompts (at 1.2 its
    #: corner-cutting prompts read as an 8% margin: planes 0.555 against 0.818 as they are); the
    #: other frames 1.29 or more (96 generated roads and 15 prompt sets of the samples 1.34, 72
    #: generated roads of other seeds 1.29). Half way between: a thin band, measured on few frames.
    reading_contrast: float = 1.26
    #: Gaussian smoothing (image pixels) of each window before its gradient is taken.
    reading_smoothing: float = 0.7
    #: The edge is where the median profile falls this share of the way from its level outside
    #: to its highest level inside.
    edge_level: float = 0.5

    # -- the working window (:func:`~hbb2obb.converters.image.fit.crop_window`)
    #: Working pixels per image pixel at most, unless the window's long side would then be
    #: shorter than ``min_window`` working pixels. Bilinear resampling finer than the image adds
    #: no detail, only cost (a 45-pixel ship's window was resampled to 96, a 15-pixel car's to
    #: about 5 per pixel), while the pixel-scale steps (the 3x3 mean field, a kernel of at least
    #: 3) need some pixels. Measured (ships of the tuned DOTA frames; synthetic tight frames): at
    #: most 2 per pixel against no limit 0.740 (0.739), 0.884 (0.882); then, with the tight mean
    #: field, at most 1 and at least 48 px against at most 2: ships 0.756 (0.746), planes 0.876
    #: (0.874), helicopters 0.860 (0.860), synthetic 0.889 (0.890), at about two thirds of the
    #: cost per small box; Songdo 00164 0.838 throughout (its cars are downsampled).
    max_upsampling: float = 1.0
    min_window: float = 48.0
    #: Width of the background ring around the scaled box, as a fraction of the HBB's short side.
    ring: float = 0.15

    # -- the segmentation (:func:`~hbb2obb.converters.image.box.segment_box`)
    #: Colour clusters per window, and about how many pixels the cluster centres are fitted on.
    clusters: int = 6
    kmeans_samples: int = 1500
    #: Strength of the rectangle prior (log-odds at the centre; the negative of it far outside).
    prior_strength: float = 1.0
    #: How fast the prior falls off across the rough rectangle's border (per half-breadth).
    prior_slope: float = 3.0
    #: Mean-field coupling between neighbouring pixels' labels, steps per round, and rounds of
    #: colour re-estimation after the first.
    coupling: float = 0.5
    smoothing_steps: int = 5
    rounds: int = 2
    #: The same for a tight HBB, whose fit holds the HBB nearly as a constraint, so that the mask
    #: mostly gives the axis: one re-estimation and three steps did better than two and five on
    #: the tuned DOTA frames (ships 0.740 -> 0.746, helicopters 0.850 -> 0.860, planes 0.872 ->
    #: 0.874) and on synthetic tight frames (0.884 -> 0.890), at less than half the mean field's
    #: cost (0 rounds and 3 steps, or 1 and 2, scored lower on both).
    tight_rounds: int = 1
    tight_smoothing_steps: int = 3
    #: A mask smaller than this share of the HBB's pixels is no object: fall back.
    min_mask_share: float = 0.1
    #: Least colour evidence (nats) by which the mask must stand out from the ring around the
    #: box; on a featureless or pure-noise window it stays below 0.02, on the real sample's
    #: vehicles it is 0.15 at the least (median 4.8).
    min_contrast: float = 0.1

    # -- the angle
    #: An HBB whose sides differ by less than this ratio may hold its object along either diagonal.
    near_square: float = 1.3
    #: Least coherence of the edge directions for them to pick the diagonal of a near-square HBB.
    min_coherence: float = 0.2
    #: Largest angle (degrees) between the mask's rectangle and the gradient hint for the mask's to win.
    angle_agreement: float = 8.0
    #: A tight HBB whose long side is at most ``moments_up_to`` pixels, with a mask at least this
    #: elongated (covariance eigenvalue ratio; a 2.4:1 car gives about 5.8), refines its angle by
    #: the mask's second moments instead of the outline's minimum-area rectangle, whose staircase
    #: outline snaps a small car to the pixel grid. Synthetic lots (`--layout lots --tight`): cars
    #: 0.900 -> 0.919 and 0.913 -> 0.925 with the hugging rule of the class check (the fits alone,
    #: checks off: 0.903 -> 0.922); on larger boxes the outline did better (buses and trucks 0.836
    #: with the limit, 0.831 at 90 px, 0.830 at none), and at an elongation of 1.5 the tuned DOTA
    #: planes lost 0.008.
    min_elongation: float = 2.5
    moments_up_to: float = 60.0
    #: A loose box's angle moves this share of the way from its outline's (or its hint's) to its
    #: mask's principal axis when the two agree within ``angle_agreement``. Mean IoU on Songdo
    #: 00164 / synthetic loose roads 720p / 4K / lots, with the pooled breadths: none 0.859 /
    #: 0.877 / 0.927 / 0.852, this 0.860 / 0.888 / 0.928 / 0.857 (angle p90 4.3 -> 3.4, 5.1 -> 3.6
    #: deg on the first two); 0.25 0.861 / 0.883 / 0.928 / 0.855; 0.75 0.858 / 0.890 / 0.928 /
    #: 0.860; 1 0.856 / 0.892 / 0.927 / 0.859.
    loose_moment_share: float = 0.5

    # -- the fit and the self-check (:mod:`~hbb2obb.converters.image.box`)
    #: Weight of the HBB's four sides against the mask's four extents in the final fit: a loose
    #: (hand-drawn) HBB is one noisy opinion among the mask's; a tight one is nearly a constraint.
    loose_hbb_weight: float = 3.0
    tight_hbb_weight: float = 10.0
    #: The weight of an HBB shrunk by a margin read from the pixels, in place of
    #: ``tight_hbb_weight``: the frame's one margin leaves each box's sides off by that box's own
    #: spread (a 2-6% margin: up to 2% of the object per side) and by the reading's error (0.02-0.03
    #: per frame), so the mask's extents count for more. Generated roads with margin prompts, mean
    #: IoU of the 6 tuning sets (day, thermal, night; 2-6% and 6-15%) / the 6 held-out sets (seeds
    #: 401-403) / Songdo's / DOTA's margin prompts: 10 (as tight) 0.826 / 0.820 / 0.800 / 0.751; 3
    #: 0.834 / 0.830 / 0.811 / 0.752; 2 0.836 / 0.833 / 0.815 / 0.750; 1.5 0.837 / 0.836 / 0.818 /
    #: 0.749; 1 0.837 / 0.835 / 0.820 / 0.747; 0.5 0.831 / 0.829 / 0.823 / 0.739 (at 3 and 2 the
    #: held-out day 2-6% motorcycles fell below their prompts as they are; at 1 and below the night
    #: 2-6% ones).
    margin_hbb_weight: float = 1.5
    #: The same for a margin given (``margin`` a number), which has no reading error. The same sets
    #: with ``margin`` 0.04 (2-6%) and 0.105 (6-15%) given / Songdo's and DOTA's margin prompts
    #: with 0.05 given: 10 0.841 / 0.838 / 0.831 / 0.794; 3 0.849 / 0.847 / 0.834 / 0.790; 1.5
    #: 0.848 / 0.849 / 0.835 / 0.778 (DOTA's helicopters 0.840 at 3, 0.690 at 1.5; the night
    #: 2-6% motorcycles 0.630 and 0.574, 0.570 as they are).
    given_margin_hbb_weight: float = 3.0
    #: The colour contrast (nats) at which a margin fit's contrast counts in full in its confidence
    #: (:func:`~hbb2obb.converters.image.box.contrast_share`). Spearman between confidence and IoU
    #: over the 12 generated sets with margins (6 tuning, 6 held out), mean: the mask's agreement
    #: alone 0.25 (thermal -0.01 to 0.05), its mean with the contrast share at 2 / 3 / 4 nats
    #: 0.34 / 0.38 / 0.35, the agreement times the share at 3 nats 0.33; before the margin's own HBB
    #: weight, 0.28.
    margin_contrast: float = 3.0
    #: The mean distance of a tight fit's bounds from its HBB's sides (a share of the HBB's size)
    #: at which that half of its confidence is 0 (:func:`~hbb2obb.converters.image.box.bounds_share`).
    #: Spearman between confidence and IoU, generated tight prompts (day, thermal, night; seeds
    #: 303/307/305, then 401-403) and DOTA's own HBBs: the mask's agreement alone 0.32, -0.01,
    #: 0.18, 0.08, 0.25, 0.38, -0.02 (mean 0.17); its mean with this share at 0.02 / 0.05 / 0.1 /
    #: 0.2: 0.40 / 0.42 / 0.41 / 0.37 (DOTA 0.34 / 0.32 / 0.26 / 0.17); the distance alone 0.31.
    tight_bounds: float = 0.05
    #: How far (working pixels) the mask's extents are pulled in: none (0 and 0.5 tie on synthetic data).
    outline_inset: float = 0.0
    #: Colour evidence is clipped to this many nats before it is averaged, so that a few saturated
    #: pixels do not decide a comparison.
    evidence_clip: float = 3.0
    #: Width of the band around a rectangle that its inside is compared with, as a fraction of
    #: the HBB's short side.
    support_band: float = 0.15
    #: The self-check keeps the HBB when the fitted box follows the image's edges no better than
    #: the HBB and its colour contrast is lower by more than this (nats): colour alone is a weak
    #: judge in a row of look-alike neighbours (moored boats fill an HBB's corners), so it needs
    #: a margin.
    support_tolerance: float = 0.2

    # -- the frame (:mod:`~hbb2obb.converters.image.scene`)
    #: How close (pixels) to a whole pixel an HBB side must lie to count as boxed from integer
    #: corners (room for the float arithmetic of centre and size; normalized files rounded to a
    #: few decimals do not land on whole pixels, so give their tightness explicitly).
    whole_pixel: float = 1e-3
    #: A near-square loose box's two diagonal fits: the one holding this many times the other's
    #: colour evidence wins whatever its neighbours say. Over 149 such boxes with neighbours
    #: (generated roads of every look and kind of prompt, both seed groups, the samples), the
    #: two disagreed by more than 0.02 IoU on 24: on all 14 loose boxes the evidence was right
    #: (ratios 1.06 to infinite; 0.77-0.97 IoU against 0.30-0.82 by the neighbours), on the
    #: tight ones the neighbours were right 4 times of 9 (DOTA's moored ships among them, whose
    #: evidence is weak), so a tight box keeps following its neighbours.
    evidence_decides: float = 1.5
    #: Neighbours are boxes whose centres lie within this many of the box's own diagonals.
    neighbour_reach: float = 1.5
    #: Least agreement of the neighbours' orientations (mean resultant length of doubled angles).
    min_agreement: float = 0.6
    #: Fewest boxes of a class with an edge-support comparison for the class-level self-check.
    min_class_boxes: int = 3
    #: An edge-support ratio within this of one is a fitted box that is its HBB: no vote.
    same_as_hbb: float = 0.01
    #: A loose fit whose rounded rectangle would reach out of its HBB by more than this share of
    #: the HBB's side falls back
    #: (:func:`~hbb2obb.converters.image.scene.hbb_overshoot`): thin boxes of small objects
    #: (motorcycles 8-11 pixels across) whose fits turned 15-30 degrees off the box's long axis.
    #: Measured over 2,111 loose fits (Songdo, DOTA's corner-cutting prompts, generated day,
    #: thermal and night roads): above 0.2, 7 boxes, 6 of them motorcycles, which gain 1.2 IoU in
    #: all as their HBBs and one Songdo car that loses 0.05; above 0.15, 27 boxes, also good fits
    #: of Songdo's own HBBs (up to 0.18; one of them 0.946 against 0.672 as its HBB).
    max_overshoot: float = 0.2
    #: A tight fit falls back when its HBB is at least ``sliver_aspect`` times as long as broad
    #: and the fit's breadth is under ``sliver_breadth`` of the HBB's short side
    #: (:func:`~hbb2obb.converters.image.scene.is_sliver`): in a thin tight box the object lies
    #: near the long side, and only a rectangle turned toward the box's diagonal gets that thin.
    #: Measured over 3,364 tight fits of generated roads (tight and margin prompts, day, thermal
    #: and night, seeds 303/307/305 and 401/402/403): 7 such fits, every one worse than its HBB
    #: (IoU 0.00-0.27 against 0.43-0.86: unlit motorcycles, whose mask is their lamp, and two
    #: cars); with a short side of up to 0.4, 20 fits, half of them better than their HBBs.
    sliver_aspect: float = 1.5
    sliver_breadth: float = 0.3
    #: A fit falls back when it has too little evidence behind it
    #: (:func:`~hbb2obb.converters.image.box.is_weak`): its HBB (shrunk by a margin read or given)
    #: under ``weak_side`` pixels on its short side, the HBB's outline crossing edges of under
    #: ``weak_edges`` grey levels per pixel, the fit's colour standing out from its band by under
    #: ``weak_support`` nats, and the fit holding its own mask poorly (confidence under
    #: ``weak_confidence``): a body a few pixels across that hardly differs from the ground, whose
    #: mask is a detail (a lamp, a streak of light). Measured over 6,085 fits (the generated roads
    #: of every look and kind of prompt, seeds 303/307/305 and 401/402/403, and the samples' own
    #: HBBs; the thresholds were chosen on all of them): 9 such fits, all unlit motorcycles at
    #: night, every one better as its HBB (0.53-0.90 IoU against 0.23-0.60); no box of the samples
    #: from any kind of prompt. Any one threshold moved on hurt other boxes (a short side under
    #: 16 px: a thermal motorcycle; a confidence under 0.9: a day motorcycle) or kept too few
    #: (under 14 px, edges under 1.25, colour under 1.2: the night motorcycles stay below their
    #: HBBs as they are). Without the edges' condition 3 more motorcycles fell back (day and
    #: thermal), without the colour's 2 more night ones, all better as their HBBs; without both,
    #: 15 more, 10 of them good fits (day and thermal motorcycles fitted at 0.72-0.94 against
    #: 0.53-0.74 as HBBs, a DOTA large vehicle 0.95 against 0.90). Both are asked, as the
    #: self-check asks both: colour alone is a weak judge (half of DOTA's ships stand out from
    #: their bands by under 0.19, and they are fitted at 0.87 on average), edges alone are grey
    #: levels, which the exposure scales.
    weak_side: float = 15.0
    weak_edges: float = 1.5
    weak_support: float = 1.4
    weak_confidence: float = 0.8
    #: A fitted box within this many pixels of its HBB all round
    #: (:func:`~hbb2obb.converters.image.scene.hugs_its_hbb`) has no vote either.
    hug_pixels: float = 2.0
    #: ... and a class whose fits stand out from the band around them by colour this much more
    #: than their HBBs do, on average (nats), keeps its fits whatever the edges say.
    class_colour_margin: float = 0.1
    #: The class check judges only when at least this share of the class's compared fits vote:
    #: when most fits follow the same edges as their HBBs (nearly axis-aligned cars in rows), the
    #: few that differ are too few to send the whole class back.
    min_vote_share: float = 0.5
    #: Rows and aprons: a fallback box takes the orientation of converted boxes within this many
    #: of its diagonals, when their axes (modulo 90 degrees: parked along or across the same
    #: lanes) agree at least this well (mean resultant length of the quadrupled angles).
    row_reach: float = 4.0
    min_row_agreement: float = 0.8
    #: The rescued rectangle must follow the image's edges at least this share as well as the
    #: HBB: a guard against gross misfits only (a rotor disc has no outline to follow; 0.5, 0.6,
    #: 0.7, 0.8 and 0.9 kept 8, 6, 5, 4 and 4 of the tuned frames' 9 helicopters).
    row_min_edge_ratio: float = 0.5
    #: The same guard for a tight box without a usable mask inscribed at the orientation its
    #: neighbours agree on (:func:`~hbb2obb.converters.image.scene.neighbour_axes`); it had to
    #: follow the edges better than its HBB. Moored ships side by side (DOTA P0706): 5 of 229
    #: without a mask, their neighbours' axes within 1-4 degrees of the truth, inscribed at them
    #: 0.74-0.89 against 0.34-0.38 as their HBBs, follow the edges 0.63-1.13 times as well.
    neighbour_min_edge_ratio: float = 0.5
    #: Near 45 degrees (``|cos 2 theta|`` below this) a tight HBB fixes a rectangle's length plus
    #: breadth but not their split; neighbours side by side (axes within ``side_by_side_deg``,
    #: centres offset mostly across the axis) then cap each other's breadth at
    #: ``side_by_side_share`` of the distance across between their centres: parked vehicles and
    #: moored boats do not overlap.
    diagonal_cos: float = 0.35
    side_by_side_deg: float = 10.0
    side_by_side_share: float = 1.0
    #: The confidence of a box narrowed to its side-by-side neighbours' distance: its mask spilled
    #: across the gaps between them, which is what the narrowing corrected, so the mask no longer
    #: judges it. On the tuned DOTA frames the narrowed boxes were the better ones (mean IoU 0.887
    #: against 0.839), and with their mask's held share instead the confidence ranked the ships
    #: worse than by chance (Spearman -0.09 against 0.23 over the frames' converted boxes). It
    #: stands where the mask's agreement would: like every tight fit's, it is then averaged with
    #: the share of ``tight_bounds`` or, with a margin, of ``margin_contrast``.
    narrowed_confidence: float = 1.0
    #: Loose frames: fewest converted boxes of a class for their breadths to be pooled (a frame's
    #: one bus or motorcycle keeps its own).
    min_pool_boxes: int = 4
    #: The most a box keeps of its own breadth against its class's pooled one: at the image axes,
    #: where a loose HBB gives the breadth nearly directly; times (cos 2a)^2 off them, so that near
    #: 45 degrees, where it gives little more than length plus breadth, the pool decides. Mean IoU
    #: on Songdo 00164 / synthetic loose roads 720p / 4K / lots (``--seed 3``, ``--seed 5``,
    #: ``--layout lots --seed 202``): no pooling 0.838 / 0.878 / 0.930 / 0.855, this 0.860 / 0.888
    #: / 0.928 / 0.857; a share of 0.35 0.861 / 0.887 / 0.927 / 0.856, of 0.75 0.858 / 0.890 /
    #: 0.930 / 0.857; (cos 2a)^4 0.860 / 0.887 / 0.927 / 0.857; one share at every angle: 0 (the
    #: pool alone) 0.862 / 0.883 / 0.921 / 0.854, 0.25 0.860 / 0.888 / 0.925 / 0.855, 0.5 0.856 /
    #: 0.887 / 0.930 / 0.857. A quantile below the median favours the lots (their masks err wide)
    #: and costs 00164 (short).
    own_breadth_share: float = 0.5
    #: A class is pooled only when the upper quartile of its fitted lengths is at most this
    #: times the lower one (:func:`~hbb2obb.converters.image.scene.one_size`). Measured (q75 /
    #: q25 of the fitted lengths, loose fits): cars, trucks and vans of Songdo, DOTA and the
    #: generated roads 1.07-1.21, DOTA's harbour ships 1.28-1.31, the planes of DOTA's airport
    #: frame 1.55, whose corner-cutting prompts then scored 0.804 pooled and 0.860 not (as is 0.818).
    pool_length_spread: float = 1.4

    # -- loose boxes' sides moved to their dark bands (:mod:`~hbb2obb.converters.image.sides`)
    #: Narrowest box (image pixels across) whose sides are moved.
    band_min_breadth: float = 25.0
    #: Farthest a side moves, as a share of the box's breadth (the same for the ends).
    band_reach: float = 0.10
    #: How much darker (grey levels, 0-255) the band's minimum must be than the strip just inside
    #: the side, than the ground 0.18-0.30 breadths out, and than the profile 0.05-0.12 breadths
    #: beyond the minimum.
    band_depth: float = 10.0
    band_ground_margin: float = 5.0
    band_rise: float = 5.0

    @property
    def tight(self) -> bool:
        """Whether the HBBs are read as tight; ``"auto"`` must have been read from the frame first.

        Examples
        --------
        >>> ImageParams(tightness="tight").tight, ImageParams(tightness="loose").tight
        (True, False)
        """
        if self.tightness not in ("tight", "loose"):
            raise UsageError(f"a box is fitted with tightness 'tight' or 'loose', got {self.tightness!r}")
        return self.tightness == "tight"


#: The public parameters' defaults (name -> value), as the converter registry lists them.
DEFAULT_PARAMETERS = {name: getattr(ImageParams(), name) for name in PUBLIC_PARAMETERS}
