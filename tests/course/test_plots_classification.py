"""Tests of the chapter-07 pictures in gptcourse.plots: messages per class, message lengths in
tokens with the padding they cost, loss and accuracy while fine-tuning a classifier, and the
confusion matrix."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle, StepPatch  # noqa: E402

from gptcourse import plots  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() < 1.0]


def legend_texts(legend):
    return [t.get_text() for t in legend.get_texts()]


def labelled_lines(ax):
    """The lines a legend names (not helper lines such as the grey epoch lines)."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


def width_fits(fig):
    return fig.get_size_inches()[0] <= plots.MAX_FIGURE_WIDTH


# --- plot_class_balance ---------------------------------------------------------------------


def test_class_balance_groups_of_bars_one_colour_per_class_with_counts():
    counts = {"all messages": {"ham": 4827, "spam": 747}, "balanced": {"ham": 747, "spam": torch.tensor(747)}}

    ax = plots.plot_class_balance(counts)

    assert isinstance(ax, Axes) and width_fits(ax.figure)
    found = bars(ax)
    assert [b.get_height() for b in found] == [4827, 747, 747, 747]  # ham of each set, then spam of each set
    colours = [to_hex(b.get_facecolor()) for b in found]
    assert colours[:2] == [to_hex(plots.CLASS_COLOURS[0])] * 2 and colours[2:] == [to_hex(plots.CLASS_COLOURS[1])] * 2
    ham_all, ham_balanced, spam_all, spam_balanced = found
    assert spam_all.get_x() == pytest.approx(ham_all.get_x() + ham_all.get_width())  # side by side in a group
    assert ham_balanced.get_x() > spam_all.get_x()  # the next group to the right
    assert [t.get_text() for t in ax.texts] == ["4,827", "747", "747", "747"]
    for text, bar in zip(ax.texts, found):  # each count sits on its own bar
        assert text.xy[0] == pytest.approx(bar.get_x() + bar.get_width() / 2)
        assert text.xy[1] == pytest.approx(bar.get_height())
    assert legend_texts(ax.get_legend()) == ["ham", "spam"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["all messages\n(5,574 messages)",
                                                            "balanced\n(1,494 messages)"]
    assert ax.get_ylabel() == "messages"
    assert ax.get_ylim()[1] > 4827 * 1.1  # room above the tallest bar for its count and the legend


def test_class_balance_a_class_missing_from_a_set_counts_zero():
    ax = plots.plot_class_balance({"a": {"ham": 3}, "b": {"ham": 2, "spam": 5}}, title="Two sets")

    assert [b.get_height() for b in bars(ax)] == [3, 2, 0, 5]
    assert legend_texts(ax.get_legend()) == ["ham", "spam"]
    assert ax.get_title() == "Two sets"


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ({}, "empty"),
        ({"a": {}}, "no classes"),
        ({"a": {"ham": -1}}, "not negative"),
        ({"a": {"ham": 2.5}}, "whole number"),
        ({"a": {str(i): 1 for i in range(7)}}, "at most 6 classes"),
    ],
)
def test_class_balance_rejects_bad_arguments(counts, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_class_balance(counts)


# --- plot_token_lengths ---------------------------------------------------------------------


def step_counts(ax):
    return [p.get_data().values for p in ax.patches if isinstance(p, StepPatch)]


def test_token_lengths_one_histogram_per_set_on_shared_bins_and_the_padding_it_costs():
    rng = np.random.default_rng(0)
    lengths = {"train": rng.integers(3, 121, 200), "validation": torch.tensor(rng.integers(3, 100, 30)),
               "test": list(rng.integers(5, 110, 60))}

    ax = plots.plot_token_lengths(lengths, padded_to=120, bins=20)

    assert isinstance(ax, Axes) and width_fits(ax.figure)
    histograms = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert [h.get_data().values.sum() for h in histograms] == [200, 30, 60]  # every message counted once
    assert all(len(h.get_data().edges) == 21 for h in histograms)
    np.testing.assert_array_equal(histograms[0].get_data().edges, histograms[1].get_data().edges)  # shared bins
    np.testing.assert_array_equal(histograms[0].get_data().values,
                                  np.histogram(lengths["train"], bins=histograms[0].get_data().edges)[0])
    padded = labelled_lines(ax)["padded to 120 tokens"]
    assert list(padded.get_xdata()) == [120, 120] and padded.get_linestyle() == "--"
    assert ax.get_xlim()[0] == 0 and ax.get_xlim()[1] > 120
    for name, label in zip(lengths, legend_texts(ax.get_legend())):
        values = np.asarray(lengths[name])
        share = np.mean(120 - values) / 120
        assert label == f"{name} ({len(values)} messages)\n{100 * share:.1f} % of padded tokens are padding"
    assert legend_texts(ax.get_legend())[-1] == "padded to 120 tokens"
    assert ax.get_xlabel() == "tokens per message" and ax.get_ylabel() == "messages"


def test_token_lengths_padding_share_of_a_hand_example_and_messages_cut():
    # Padded to 4 tokens: 2 + 0 + 0 padding tokens out of 3 * 4, one message cut: 2 / 12 = 16.7 %.
    ax = plots.plot_token_lengths({"train": [2, 4, 10], "test": [4, 4]}, padded_to=4)

    assert legend_texts(ax.get_legend())[:2] == [
        "train (3 messages)\n16.7 % of padded tokens are padding, 1 message cut",
        "test (2 messages)\n0.0 % of padded tokens are padding",
    ]


def test_token_lengths_context_length_as_a_line_when_near_and_named_when_far():
    near = plots.plot_token_lengths({"train": [10, 20, 90]}, padded_to=90, context_length=128)
    line = labelled_lines(near)["context length (128 tokens)"]
    assert list(line.get_xdata()) == [128, 128]
    assert near.get_xlim()[1] > 128

    far = plots.plot_token_lengths({"train": [10, 20, 120]}, padded_to=120, context_length=1024)
    entry = [label for label in labelled_lines(far) if label.startswith("context length")]
    assert entry == ["context length (1,024 tokens):\nfar to the right, off this scale"]
    assert len(labelled_lines(far)[entry[0]].get_xdata()) == 0  # a legend entry only
    assert 120 < far.get_xlim()[1] < 200  # the histogram keeps the width


def test_token_lengths_without_padding_has_no_line_and_no_share():
    ax = plots.plot_token_lengths({"train": np.array([1, 2, 3])}, bins=3)
    assert not ax.get_lines()
    assert legend_texts(ax.get_legend()) == ["train (3 messages)"]
    assert step_counts(ax)[0].tolist() == [1, 1, 1]


@pytest.mark.parametrize(
    ("lengths", "kwargs", "message"),
    [
        ({}, {}, "empty"),
        ({"train": []}, {}, "no lengths"),
        ({"train": [1, -2]}, {}, "not negative"),
        ({"train": [1.5, 2]}, {}, "whole number"),
        ({"train": [1, 2]}, {"padded_to": 0}, "padded_to must be at least 1"),
        ({"train": [1, 2]}, {"context_length": 2.5}, "context_length must be a whole number"),
        ({"train": [1, 2]}, {"bins": 0}, "bins must be at least 1"),
        ({str(i): [1] for i in range(5)}, {}, "at most 4 sets"),
    ],
)
def test_token_lengths_rejects_bad_arguments(lengths, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_token_lengths(lengths, **kwargs)


# --- plot_classifier_training ---------------------------------------------------------------

TRAIN_LOSSES = [2.1, 1.2, 0.7, 0.4, 0.3, 0.2]
VAL_LOSSES = [2.2, 1.4, 0.8, 0.5, 0.45, 0.4]
TRAIN_ACCS = [0.70, 0.90, 0.995]
VAL_ACCS = [0.65, 0.88, 0.975]


def test_classifier_training_losses_against_examples_seen_with_epochs_on_top():
    seen = [80, 400, 720, 1040, 1360, 1680]  # three epochs of 560 examples

    fig = plots.plot_classifier_training(torch.tensor(TRAIN_LOSSES, requires_grad=True), VAL_LOSSES, TRAIN_ACCS,
                                         VAL_ACCS, examples_seen=seen, epochs=3, title="Spam classifier")

    assert isinstance(fig, Figure) and width_fits(fig)
    loss_ax, acc_ax = fig.axes[:2]
    assert loss_ax.get_position().x1 < acc_ax.get_position().x0  # side by side, loss on the left
    lines = labelled_lines(loss_ax)
    np.testing.assert_allclose(lines["training loss"].get_ydata(), TRAIN_LOSSES, rtol=1e-6)
    np.testing.assert_allclose(lines["validation loss"].get_ydata(), VAL_LOSSES)
    np.testing.assert_array_equal(lines["training loss"].get_xdata(), seen)
    assert loss_ax.get_xlabel() == "examples seen" and "loss" in loss_ax.get_ylabel()
    (top,) = loss_ax.child_axes
    fig.canvas.draw()  # a secondary axis follows the limits of its parent when drawn
    assert top.get_xlabel() == "epoch"
    assert list(top.get_xticks()) == [0, 1, 2, 3]
    assert top.get_xlim() == pytest.approx(np.array(loss_ax.get_xlim()) / 560)  # 1,680 examples = 3 epochs
    epoch_lines = [line.get_xdata()[0] for line in loss_ax.get_lines() if line.get_label().startswith("_")]
    assert epoch_lines == pytest.approx([560, 1120])
    assert fig._suptitle.get_text() == "Spam classifier"


def test_classifier_training_accuracy_per_epoch_as_percentages_with_the_last_written():
    fig = plots.plot_classifier_training(TRAIN_LOSSES, VAL_LOSSES, np.array(TRAIN_ACCS), torch.tensor(VAL_ACCS))

    acc_ax = fig.axes[1]
    lines = labelled_lines(acc_ax)
    np.testing.assert_array_equal(lines["training accuracy"].get_xdata(), [1, 2, 3])
    np.testing.assert_allclose(lines["training accuracy"].get_ydata(), TRAIN_ACCS)
    np.testing.assert_allclose(lines["validation accuracy"].get_ydata(), VAL_ACCS, rtol=1e-6)
    assert acc_ax.get_ylim() == (0, 1)
    assert acc_ax.yaxis.get_major_formatter()(0.5, 0) == "50 %"
    assert acc_ax.get_xlabel() == "epoch" and acc_ax.get_ylabel() == "accuracy"
    notes = {t.get_text(): t for t in acc_ax.texts}
    assert set(notes) == {"99.5 %", "97.5 %"}
    assert notes["99.5 %"].xy == pytest.approx((3, 0.995)) and notes["97.5 %"].xy == pytest.approx((3, 0.975))
    assert notes["99.5 %"].xyann[1] > notes["97.5 %"].xyann[1]  # close values: labels pushed apart, in order
    assert notes["99.5 %"].xyann[1] < 0  # and kept below the top of the panel
    # Without examples_seen, the losses are drawn against the evaluation number.
    loss_lines = labelled_lines(fig.axes[0])
    np.testing.assert_array_equal(loss_lines["training loss"].get_xdata(), [1, 2, 3, 4, 5, 6])
    assert fig.axes[0].get_xlabel() == "evaluation" and not fig.axes[0].child_axes


def test_classifier_training_total_examples_seen_spreads_the_evaluations_as_the_book():
    fig = plots.plot_classifier_training(TRAIN_LOSSES, VAL_LOSSES, TRAIN_ACCS, VAL_ACCS, examples_seen=5000)
    np.testing.assert_allclose(labelled_lines(fig.axes[0])["training loss"].get_xdata(), [0, 1000, 2000, 3000,
                                                                                         4000, 5000])


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([], [], [0.5], [0.5]), {}, "train \\(and evaluate\\)"),
        (([1.0, 2.0], [1.0], [0.5], [0.5]), {}, "one loss per evaluation"),
        (([1.0], [1.0], [0.5, 0.6], [0.5]), {}, "one accuracy per epoch"),
        (([1.0], [1.0], [95.0], [90.0]), {}, "0.95, not 95"),
        (([1.0, 2.0], [1.0, 2.0], [0.5], [0.5]), {"examples_seen": [1, 2, 3]}, "one count per evaluation"),
        (([1.0, 2.0], [1.0, 2.0], [0.5], [0.5]), {"examples_seen": [5, 3]}, "must not decrease"),
        (([1.0], [1.0], [0.5], [0.5]), {"epochs": 0}, "epochs must be at least 1"),
    ],
)
def test_classifier_training_rejects_bad_arguments(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_classifier_training(*args, **kwargs)


# --- confusion_counts and plot_confusion_matrix ---------------------------------------------


def test_confusion_counts_of_a_hand_example():
    counts = plots.confusion_counts([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], 2)
    assert counts.dtype.kind == "i"
    np.testing.assert_array_equal(counts, [[1, 1], [1, 2]])  # rows: true class, columns: predicted
    three = plots.confusion_counts(torch.tensor([2, 2, 0, 1]), np.array([2, 0, 0, 2]), 3)
    np.testing.assert_array_equal(three, [[1, 0, 0], [0, 0, 1], [1, 0, 1]])


def test_confusion_matrix_annotates_counts_and_row_shares_with_the_accuracy():
    labels, predictions = torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 1, 1, 1, 0])

    ax = plots.plot_confusion_matrix(labels, predictions)

    assert isinstance(ax, Axes) and width_fits(ax.figure)
    cells = [t.get_text() for t in ax.texts]
    assert cells == ["1\n50.0 %", "1\n50.0 %", "1\n33.3 %", "2\n66.7 %"]  # row by row
    np.testing.assert_allclose(ax.collections[0].get_array().reshape(2, 2), [[0.5, 0.5], [1 / 3, 2 / 3]])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["not spam", "spam"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["not spam", "spam"]
    assert ax.get_ylabel() == "true class" and ax.get_xlabel() == "predicted class"
    assert ax.get_title() == "Confusion matrix\naccuracy 60.0 % (3 of 5)"


def test_confusion_matrix_colours_the_diagonal_darkest_even_when_classes_are_unbalanced():
    labels = np.array([0] * 90 + [1] * 10)
    predictions = labels.copy()
    predictions[:9] = 1  # 81 of 90 hams right, 1 of 10 spams wrong: 89 % accuracy
    predictions[90] = 0

    ax = plots.plot_confusion_matrix(labels, predictions, class_names=["ham", "spam"], title="Test set")

    colours = ax.collections[0].get_facecolors()
    brightness = colours[:, :3].sum(axis=1).reshape(2, 2)
    assert brightness[1, 1] < brightness[0, 1] and brightness[0, 0] < brightness[1, 0]  # dark diagonal
    assert [t.get_text() for t in ax.texts] == ["81\n90.0 %", "9\n10.0 %", "1\n10.0 %", "9\n90.0 %"]
    assert ax.get_title() == "Test set\naccuracy 90.0 % (90 of 100)"


def test_confusion_matrix_of_more_classes():
    ax = plots.plot_confusion_matrix([0, 1, 2, 3, 4, 4], [0, 1, 2, 3, 4, 0], class_names=list("abcde"))
    assert len(ax.texts) == 25
    assert ax.texts[24].get_text() == "1\n50.0 %" and ax.texts[20].get_text() == "1\n50.0 %"
    assert "accuracy 83.3 % (5 of 6)" in ax.get_title()


@pytest.mark.parametrize(
    ("labels", "predictions", "kwargs", "message"),
    [
        ([0, 2], [0, 1], {}, "labels must be class indices from 0 to 1 \\(2 classes\\), got 2"),
        ([0, 1], [0, -1], {}, "predictions must be class indices from 0 to 1"),
        ([0, 1], [0.3, 0.9], {}, "argmax"),
        ([0, 1, 1], [0, 1], {}, "one prediction per label"),
        ([], [], {}, "empty"),
        ([0], [0], {"class_names": ["only"]}, "at least 2 classes"),
    ],
)
def test_confusion_matrix_rejects_bad_arguments(labels, predictions, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_confusion_matrix(labels, predictions, **kwargs)


def test_classifier_training_epochs_from_examples_per_epoch_when_training_went_on_after_the_last_evaluation():
    seen = [8, 408, 808]  # evaluations every 50 steps of 8; two epochs of 520 examples end at 1,040

    fig = plots.plot_classifier_training(TRAIN_LOSSES[:3], VAL_LOSSES[:3], TRAIN_ACCS[:2], VAL_ACCS[:2],
                                         examples_seen=seen, epochs=2, examples_per_epoch=520)

    loss_ax = fig.axes[0]
    (top,) = loss_ax.child_axes
    fig.canvas.draw()
    assert top.get_xlim() == pytest.approx(np.array(loss_ax.get_xlim()) / 520)
    epoch_lines = [line.get_xdata()[0] for line in loss_ax.get_lines() if line.get_label().startswith("_")]
    assert epoch_lines == pytest.approx([520])


def test_rank_energy_of_a_rank_one_matrix_is_all_in_the_first_value():
    rank_one = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5, 2.0])
    np.testing.assert_allclose(plots.rank_energy(rank_one), [1.0, 1.0, 1.0], atol=1e-12)
    diagonal = np.diag([3.0, 1.0])  # squared singular values 9 and 1
    np.testing.assert_allclose(plots.rank_energy(torch.tensor(diagonal)), [0.9, 1.0])


def test_plot_rank_energy_draws_one_curve_per_matrix_and_labels_the_ranks():
    rng = np.random.default_rng(0)
    low = rng.normal(size=(20, 2)) @ rng.normal(size=(2, 30))
    ax = plots.plot_rank_energy({"weight change": low, "random": rng.normal(size=(20, 30))}, ranks=(2,))
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == {"weight change", "random"}
    assert lines["weight change"].get_ydata()[1] == pytest.approx(1.0)  # rank 2 keeps all of a rank-2 matrix
    assert lines["random"].get_ydata()[1] < 0.5
    assert any(text.get_text().startswith("r = 2: 100%") for text in ax.texts)
    with pytest.raises(ValueError, match="2 dimensions"):
        plots.plot_rank_energy({"vector": np.ones(3)})


def test_token_lengths_name_what_they_count():
    # Chapter 09 counts instruction entries, not messages.
    ax = plots.plot_token_lengths({"train": [2, 4, 10], "test": [4]}, padded_to=4, item="entry")

    assert legend_texts(ax.get_legend())[:2] == [
        "train (3 entries)\n16.7 % of padded tokens are padding, 1 entry cut",
        "test (1 entry)\n0.0 % of padded tokens are padding",
    ]
    assert ax.get_xlabel() == "tokens per entry" and ax.get_ylabel() == "entries"
