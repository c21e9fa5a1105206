"""The detection figures stay readable with many classes: at most MAX_CLASSES drawn, the rest summed
or named in the title, nothing lost from the counts drawn."""

from __future__ import annotations

import numpy as np

from hbb2obb.plotting.detection import MAX_CLASSES, confusion_figure, top_classes
from hbb2obb.plotting.errors import TYPES, plot_errors


def confusion_metrics(n_classes: int, seed: int = 0) -> tuple[dict, np.ndarray]:
    rng = np.random.default_rng(seed)
    size = n_classes + 1  # the last row and column: background
    counts = rng.integers(0, 4, (size, size))
    counts[np.arange(n_classes), np.arange(n_classes)] += rng.integers(0, 50, n_classes)
    counts[-1, -1] = 0
    matrix = {"classes": list(range(n_classes)) + ["background"], "counts": counts.tolist()}
    return {"confusion_matrix": matrix, "detection_scored": False}, counts


def cell_texts(figure) -> list[int]:
    ax = figure.axes[0]
    return [int(text.get_text()) for text in ax.texts]


def test_top_classes_keep_the_largest_in_their_order():
    weights = np.array([3, 9, 1, 9, 5, 0, 7])
    kept = top_classes(weights, limit=4)
    assert kept.tolist() == [1, 3, 4, 6] and len(top_classes(weights, limit=10)) == 7
    assert top_classes([2, 2, 2], limit=2).tolist() == [0, 1]  # the first on a tie


def test_a_confusion_matrix_of_few_classes_is_drawn_whole():
    metrics, counts = confusion_metrics(6)
    figure = confusion_figure(metrics)
    assert cell_texts(figure) == counts.ravel().tolist()
    assert "summed" not in figure.axes[0].get_title()


def test_a_confusion_matrix_of_many_classes_sums_the_rest_into_one_row_and_column():
    metrics, counts = confusion_metrics(300)
    figure = confusion_figure(metrics)
    ax = figure.axes[0]
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert len(labels) == MAX_CLASSES + 2 and labels[-2:] == ["275 other classes", "background"]
    shown = cell_texts(figure)
    assert len(shown) == (MAX_CLASSES + 2) ** 2 and sum(shown) == counts.sum()  # every box still counted once
    weight = counts.sum(axis=0) + counts.sum(axis=1)
    keep = np.argsort(-weight[:300], kind="stable")[:MAX_CLASSES]
    assert labels[:MAX_CLASSES] == [str(k) for k in sorted(keep.tolist())]  # the classes with the most boxes
    grid = np.array(shown).reshape(MAX_CLASSES + 2, MAX_CLASSES + 2)
    kept = sorted(keep.tolist())
    np.testing.assert_array_equal(grid[:MAX_CLASSES, :MAX_CLASSES], counts[np.ix_(kept, kept)])
    assert grid[-1, -1] == 0 and "25 classes with the most boxes, 275 more summed" in ax.get_title()
    width, height = figure.get_size_inches() * figure.dpi
    assert width < 4000 and height < 4000


def errors_data(n_classes: int) -> dict:
    rng = np.random.default_rng(n_classes)
    types = [{"type": name, "dap": float(rng.random() / 10), "errors": int(rng.integers(0, 50))}
             for name in (*TYPES, "fp", "fn")]
    classes = [{"class": f"c{k}", "ap_tide": float(rng.random()), "boxes": int(rng.integers(1, 40)),
                **{f"dap_{name}": float(rng.random() / 20) for name in TYPES}} for k in range(n_classes)]
    classes[min(7, n_classes - 1)]["dap_loc"] = 5.0  # the class with the most to gain is drawn whatever its place
    return {"types": types, "classes": classes, "overall": {"ap_tide": 0.5}, "fg": 0.5}


def test_the_error_figure_draws_the_classes_with_the_most_to_gain():
    figure = plot_errors(errors_data(400))
    panel = figure.axes[1]
    ticks = [tick.get_text().split("\n")[0] for tick in panel.get_xticklabels()]
    assert len(ticks) == MAX_CLASSES and "c7" in ticks
    assert "375 more in analysis.yaml" in panel.get_title()
    assert figure.get_size_inches()[0] * 110 < 4000
    few = plot_errors(errors_data(5)).axes[1]
    assert len(few.get_xticklabels()) == 5 and "more" not in few.get_title()


def test_the_pr_figure_draws_the_classes_with_the_most_ground_truth():
    from types import SimpleNamespace

    from hbb2obb.boxes import Boxes
    from hbb2obb.detection.accumulate import accumulate
    from hbb2obb.detection.evaluate import evaluate_detections
    from hbb2obb.plotting.detection import pr_figure

    rng = np.random.default_rng(3)
    n_classes, boxes_of = 40, rng.integers(1, 6, 40)
    boxes_of[[4, 31]] = 9  # the classes with the most ground truth are drawn wherever they are
    class_id = np.repeat(np.arange(n_classes), boxes_of)
    corners = np.array([[[x, 0], [x + 8, 0], [x + 8, 8], [x, 8]] for x in 20.0 * np.arange(len(class_id))])
    gt = Boxes(corners, class_id)
    pred = Boxes(corners + 1.0, class_id, score=rng.random(len(class_id)))
    frames = np.zeros(len(class_id), dtype=np.int64)
    acc = accumulate(evaluate_detections(gt, frames, pred, frames))
    stats = {k: {"gt_total": int(n), "ap50": 1.0} for k, n in enumerate(boxes_of)}
    figure = pr_figure(SimpleNamespace(accumulation=acc), {"class_stats": stats, "map50": 1.0}, {})
    names = [text.get_text().split()[0] for text in figure.axes[0].get_legend().get_texts()]
    assert len(names) == MAX_CLASSES and {"4", "31"} <= set(names)
    assert "15 more in the metric dict" in figure.axes[0].get_title()


def test_a_long_class_name_is_cut_in_the_figures():
    import warnings

    metrics, _ = confusion_metrics(3)
    long = "a-class-name-written-out-in-full-" * 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the layout fits: no warning that it could not
        figure = confusion_figure(metrics, {0: long, 1: "bus", 2: "car"})
    labels = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert labels[0] == long[:29] + "..." and labels[1:] == ["bus", "car", "background"]
    panel = plot_errors({**errors_data(3), "classes": [{**errors_data(3)["classes"][0], "class": long}]}).axes[1]
    assert panel.get_xticklabels()[0].get_text().split("\n")[0] == long[:29] + "..."
