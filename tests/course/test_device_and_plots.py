"""Tests of gptcourse.device and gptcourse.plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gptcourse import device, plots  # noqa: E402

TOKENS = ["Your", "journey", "starts", "with"]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(autouse=True)
def no_device_override(monkeypatch):
    monkeypatch.delenv("GPTCOURSE_DEVICE", raising=False)


@pytest.fixture
def no_gpu(monkeypatch):
    """Pretend this machine has neither an NVIDIA nor an Apple GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "_mps_is_available", lambda: False)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def attention_weights(num_tokens=4, seed=0, requires_grad=True):
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(num_tokens, num_tokens, generator=generator, requires_grad=requires_grad)
    return torch.softmax(scores, dim=-1)


def tick_texts(ax: Axes) -> tuple[list[str], list[str]]:
    x_labels = [label.get_text() for label in ax.get_xticklabels()]
    y_labels = [label.get_text() for label in ax.get_yticklabels()]
    return x_labels, y_labels


# --- device ----------------------------------------------------------------------------


def test_cpu_on_request():
    assert device.get_device("cpu") == torch.device("cpu")


def test_cpu_when_there_is_no_gpu(no_gpu):
    assert device.get_device() == torch.device("cpu")


def test_environment_variable_wins_over_prefer(monkeypatch):
    monkeypatch.setenv("GPTCOURSE_DEVICE", "cpu")
    assert device.get_device("cuda") == torch.device("cpu")


def test_unavailable_cuda_is_a_clear_error(no_gpu):
    with pytest.raises(RuntimeError, match="CUDA"):
        device.get_device("cuda")


def test_unavailable_cuda_from_the_environment_is_a_clear_error(no_gpu, monkeypatch):
    monkeypatch.setenv("GPTCOURSE_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match="GPTCOURSE_DEVICE"):
        device.get_device()


def test_unavailable_mps_is_a_clear_error(no_gpu):
    with pytest.raises(RuntimeError, match="Apple"):
        device.get_device("mps")


def test_unknown_device_name(no_gpu):
    with pytest.raises(ValueError, match="cuda, mps, cpu"):
        device.get_device("gpu")


def test_describe_cpu():
    assert device.describe_device("cpu") == f"cpu ({torch.get_num_threads()} threads)"


@pytest.mark.cuda
@needs_cuda
def test_cuda_is_chosen_and_described_when_present():
    chosen = device.get_device()
    assert chosen.type == "cuda"
    description = device.describe_device(chosen)
    assert description.startswith("cuda (")
    assert torch.cuda.get_device_name(0) in description
    assert description.endswith(" GiB)")


# --- plots -----------------------------------------------------------------------------


def test_plot_attention_draws_an_annotated_heatmap():
    weights = attention_weights()  # requires grad: the helper must detach

    ax = plots.plot_attention(weights, TOKENS, title="demo")

    assert isinstance(ax, Axes)
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar
    assert tick_texts(ax) == (TOKENS, TOKENS)
    assert ax.get_title() == "demo"
    # The colour scale spans the weights shown, so that near-uniform weights still show a pattern.
    assert ax.collections[0].get_clim() == pytest.approx((weights.min().item(), weights.max().item()))
    shown = np.asarray(ax.collections[0].get_array()).reshape(4, 4)
    np.testing.assert_allclose(shown, weights.detach().numpy(), rtol=1e-6)
    annotations = [text.get_text() for text in ax.texts]
    assert len(annotations) == 16
    assert annotations[0] == f"{weights[0, 0].item():.2f}"


def test_plot_attention_near_uniform_weights_use_the_whole_colour_scale():
    """Issue: a fixed 0..1 scale made an untrained layer's weights (all about 1/3 here) one dark block."""
    weights = torch.tensor([[0.30, 0.33, 0.37], [0.34, 0.33, 0.33], [0.32, 0.36, 0.32]])

    mesh = plots.plot_attention(weights).collections[0]

    # The smallest and the largest weight get the two ends of the colour map ...
    assert mesh.norm(0.30) == pytest.approx(0.0, abs=1e-5) and mesh.norm(0.37) == pytest.approx(1.0, abs=1e-5)
    colours = mesh.cmap(mesh.norm(np.asarray(mesh.get_array()).ravel()))[:, :3]
    assert np.ptp(colours, axis=0).max() > 0.5  # ... so the cells really differ in colour


def test_plot_attention_fixed_scale_on_request():
    ax = plots.plot_attention(attention_weights(), vmin=0, vmax=1)
    assert ax.collections[0].get_clim() == (0.0, 1.0)


def test_plot_attention_shows_causally_masked_weights_in_grey():
    causal = torch.tril(torch.rand(4, 4) + 0.1)
    weights = causal / causal.sum(dim=-1, keepdim=True)

    ax = plots.plot_attention(weights, TOKENS)

    drawn = np.ma.getmaskarray(ax.collections[0].get_array()).reshape(4, 4)
    np.testing.assert_array_equal(drawn, np.triu(np.ones((4, 4), dtype=bool), k=1))  # not drawn
    assert ax.get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(plots.MASKED_COLOUR))
    visible = weights[~torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)]
    # The masked zeros are left out of the colour scale, and get no number.
    assert ax.collections[0].get_clim() == pytest.approx((visible.min().item(), visible.max().item()))
    assert len(ax.texts) == 10
    assert "masked" in ax.figure.axes[-1].get_ylabel()  # the colour bar says what grey means


def test_plot_attention_on_a_given_axes_without_annotations():
    fig, ax = plt.subplots()
    returned = plots.plot_attention(np.eye(3), annot=False, ax=ax)
    assert returned is ax
    assert len(ax.texts) == 0
    assert tick_texts(ax) == (["0", "1", "2"], ["0", "1", "2"])


def test_plot_attention_rejects_wrong_shapes():
    with pytest.raises(ValueError, match=r"\(T, T\)"):
        plots.plot_attention(np.ones((2, 3)))
    with pytest.raises(ValueError, match="tokens"):
        plots.plot_attention(np.eye(3), TOKENS)


@pytest.mark.cuda
@needs_cuda
def test_plot_attention_accepts_a_cuda_tensor():
    ax = plots.plot_attention(attention_weights().cuda(), TOKENS)
    assert tick_texts(ax) == (TOKENS, TOKENS)


def test_plot_attention_heads_one_panel_per_head():
    weights = torch.softmax(torch.randn(3, 4, 4, requires_grad=True), dim=-1)

    fig = plots.plot_attention_heads(weights, TOKENS, title="three heads")

    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3 + 1  # three heads and one shared colour bar
    heads = fig.axes[:3]
    assert [ax.get_title() for ax in heads] == ["head 0", "head 1", "head 2"]
    for ax in heads:
        assert tick_texts(ax) == (TOKENS, TOKENS)
    assert fig._suptitle.get_text() == "three heads"


def test_plot_attention_heads_accepts_a_batch_of_one():
    fig = plots.plot_attention_heads(torch.full((1, 2, 4, 4), 0.25))
    assert len(fig.axes) == 2 + 1


@pytest.mark.parametrize("num_heads, rows, columns", [(2, 1, 2), (4, 2, 2), (6, 2, 3), (12, 4, 3)])
def test_plot_attention_heads_fit_the_width_of_a_notebook(num_heads, rows, columns):
    """Issue: four heads in one row made a figure 19 inches wide, too small to read."""
    weights = torch.softmax(torch.randn(num_heads, 6, 6), dim=-1)

    fig = plots.plot_attention_heads(weights, TOKENS + ["one", "step"])

    assert fig.get_size_inches()[0] <= plots.MAX_FIGURE_WIDTH
    heads = fig.axes[:num_heads]
    positions = {(round(ax.get_position().x0, 3), round(ax.get_position().y0, 3)) for ax in heads}
    assert len({x for x, _ in positions}) == columns and len({y for _, y in positions}) == rows
    # One shared colour scale, so that the heads' colours compare.
    assert len({ax.collections[0].get_clim() for ax in heads}) == 1


def test_plot_causal_mask_from_a_length():
    ax = plots.plot_causal_mask(4)

    assert isinstance(ax, Axes)
    assert tick_texts(ax) == (["0", "1", "2", "3"], ["0", "1", "2", "3"])
    shown = np.asarray(ax.collections[0].get_array()).reshape(4, 4)
    np.testing.assert_array_equal(shown, np.triu(np.ones((4, 4)), k=1))
    legend_texts = [text.get_text() for text in ax.get_legend().get_texts()]
    assert len(legend_texts) == 2
    assert any("hidden" in text for text in legend_texts)


@pytest.mark.parametrize(
    "mask",
    [
        torch.triu(torch.ones(4, 4), diagonal=1).bool(),  # True = hidden
        torch.triu(torch.full((4, 4), float("-inf")), diagonal=1),  # additive mask
    ],
)
def test_plot_causal_mask_from_a_mask(mask):
    ax = plots.plot_causal_mask(mask, TOKENS, title="mask")
    assert tick_texts(ax) == (TOKENS, TOKENS)
    assert ax.get_title() == "mask"
    shown = np.asarray(ax.collections[0].get_array()).reshape(4, 4)
    np.testing.assert_array_equal(shown, np.triu(np.ones((4, 4)), k=1))


def test_plot_dropout_effect_two_panels_on_one_scale():
    causal = torch.tril(torch.ones(4, 4))
    weights = causal / causal.sum(dim=-1, keepdim=True)  # first row: [1, 0, 0, 0]
    # What Dropout(p=0.5) does: zero some weights and double the kept ones.
    kept = torch.tensor([[1.0, 1, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1]])
    dropped = weights * kept * 2  # largest value 2.0

    fig = plots.plot_dropout_effect(weights, dropped, TOKENS)

    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2 + 1  # two heatmaps and one shared colour bar
    left, right = fig.axes[:2]
    assert "without" in left.get_title() and "with dropout" in right.get_title()
    assert "×2.00" in right.get_title()  # the kept weights were doubled
    for ax in (left, right):
        assert tick_texts(ax) == (TOKENS, TOKENS)
    # one scale for both panels, reaching the largest weight after dropout
    assert left.collections[0].get_clim() == right.collections[0].get_clim()
    assert right.collections[0].get_clim()[1] == 2.0


def test_plot_dropout_effect_dropped_and_masked_zeros_look_different():
    """Issue: a weight dropout set to 0 and one the causal mask set to 0 looked the same."""
    causal = torch.tril(torch.ones(4, 4))
    weights = causal / causal.sum(dim=-1, keepdim=True)
    kept = torch.tensor([[1.0, 1, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 0]])
    after = weights * kept * 2  # dropped: (1, 0), (2, 1), (3, 2), (3, 3)

    fig = plots.plot_dropout_effect(weights, after, TOKENS)
    left, right = fig.axes[:2]

    future = np.triu(np.ones((4, 4), dtype=bool), k=1)
    dropped = np.zeros((4, 4), dtype=bool)
    dropped[[1, 2, 3, 3], [0, 1, 2, 3]] = True
    # Neither kind of zero is drawn in the colours of the weights ...
    np.testing.assert_array_equal(np.ma.getmaskarray(left.collections[0].get_array()).reshape(4, 4), future)
    np.testing.assert_array_equal(np.ma.getmaskarray(right.collections[0].get_array()).reshape(4, 4),
                                  future | dropped)
    # ... the masked ones show the grey background, the dropped ones a white cell with a cross.
    white_cells = {(int(p.get_y()), int(p.get_x())) for p in right.patches
                   if p.get_facecolor()[:3] == matplotlib.colors.to_rgb(plots.DROPPED_COLOUR)}
    assert white_cells == {tuple(cell) for cell in np.argwhere(dropped)}
    crosses = [line for line in right.lines if line.get_color() == plots.DROPPED_MARK_COLOUR]
    assert len(crosses) == 2 * dropped.sum()
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    assert any("masked" in text for text in legend) and any("dropped" in text for text in legend)


def test_plot_dropout_effect_needs_matching_shapes():
    with pytest.raises(ValueError, match="same shape"):
        plots.plot_dropout_effect(np.eye(4), np.eye(3))
