"""Tests of the chapter-04 pictures in gptcourse.plots: the GPT architecture, LayerNorm,
activation functions, gradient sizes, parameter counts and next-token probabilities."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gptcourse import plots  # noqa: E402

GPT_CONFIG_124M = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12,
                   "n_layers": 12, "drop_rate": 0.1, "qkv_bias": False}
TINY = {"vocab_size": 50, "context_length": 6, "emb_dim": 8, "n_heads": 2, "n_layers": 3,
        "drop_rate": 0.0, "qkv_bias": False}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def all_texts(fig):
    return [text.get_text() for ax in fig.axes for text in ax.texts]


# --- plot_gpt_architecture ----------------------------------------------------------------


def test_architecture_shows_the_shape_at_every_step_of_gpt2_small():
    fig = plots.plot_gpt_architecture(GPT_CONFIG_124M, batch=2, num_tokens=4)

    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    shapes = [t.get_text() for t in ax.texts if t.get_gid() == "shape"]
    assert shapes[:2] == ["(2, 4)", "(4,)"]  # token ids and positions
    assert "(4, 768)" in shapes  # the position embeddings, before broadcasting over the batch
    assert "(2, 4, 50257)" in shapes  # the logits
    assert shapes.count("(2, 4, 768)") >= 10  # the main path and every step inside a block
    shown = "\n".join(all_texts(fig))
    for expected in ("Embedding(50,257, 768)", "Embedding(1,024, 768)", "transformer block × 12",
                     "Linear(768, 50,257, bias=False)", "12 heads × 64 features", "768 → 3072 → 768",
                     "(2, 4, 3072)", "LayerNorm 1", "LayerNorm 2", "final LayerNorm", "dropout (p = 0.1)"):
        assert expected in shown, expected


def test_architecture_draws_every_component_once_and_two_shortcuts():
    fig = plots.plot_gpt_architecture(TINY, batch=1, num_tokens=5)
    ax = fig.axes[0]

    boxes = [p.get_gid() for p in ax.patches if (p.get_gid() or "").startswith("box:")]
    for name in ("ids", "positions", "tok_emb", "pos_emb", "drop_emb", "trf_blocks", "final_norm",
                 "out_head", "logits", "norm1", "att", "drop-att", "norm2", "ff", "drop-ff",
                 "add-embeddings", "add-att", "add-ff"):
        assert boxes.count(f"box:{name}") == 1, name
    shortcuts = [t for t in ax.texts if t.get_text() == "shortcut"]
    assert len(shortcuts) == 2
    shapes = [t.get_text() for t in ax.texts if t.get_gid() == "shape"]
    assert shapes[0] == "(1, 5)" and "(1, 5, 50)" in shapes and "(1, 5, 8)" in shapes
    assert "transformer block × 3" in "\n".join(all_texts(fig))
    assert fig.get_size_inches()[0] <= plots.MAX_FIGURE_WIDTH


@pytest.mark.parametrize(
    ("cfg", "kwargs", "message"),
    [
        (TINY, {"num_tokens": 7}, "larger than the context length"),
        (TINY, {"batch": 0}, "batch must be at least 1"),
        ({k: v for k, v in TINY.items() if k != "n_layers"}, {}, "n_layers"),
    ],
)
def test_architecture_rejects_bad_arguments(cfg, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_gpt_architecture(cfg, **kwargs)


# --- plot_layernorm_effect ----------------------------------------------------------------


def test_layernorm_effect_one_curve_and_one_mean_per_row_in_each_panel():
    torch.manual_seed(0)
    before = torch.tensor([[-3.0], [0.0], [4.0]]) + torch.tensor([[0.5], [1.0], [2.0]]) * torch.randn(3, 200)
    after = (before - before.mean(-1, keepdim=True)) / before.std(-1, unbiased=False, keepdim=True)

    fig = plots.plot_layernorm_effect(before.requires_grad_(), after)  # must detach

    left, right = fig.axes
    assert left.get_title() == "before LayerNorm" and right.get_title() == "after LayerNorm"
    for ax in (left, right):
        assert ax.get_xlabel() and ax.get_ylabel() == "density"
        labels = [text.get_text() for text in ax.get_legend().get_texts()]
        assert [label.split(":")[0] for label in labels] == ["row 0", "row 1", "row 2"]
        curves = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
        means = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert len(curves) == len(means) == 3
    legend = [text.get_text() for text in left.get_legend().get_texts()]
    assert f"mean {before[2].mean().item():+.2f}" in legend[2]
    assert f"var {before[2].var(unbiased=False).item():.2f}" in legend[2]
    assert all("mean +0.00, var 1.00" in t.get_text() for t in right.get_legend().get_texts())


def test_layernorm_effect_copes_with_a_constant_row():
    before = torch.stack([torch.full((10,), 2.0), torch.arange(10.0)])
    fig = plots.plot_layernorm_effect(before, before - 1)
    assert len(fig.axes[0].get_legend().get_texts()) == 2


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        (torch.zeros(5), torch.zeros(5), "rows, features"),
        (torch.zeros(2, 5), torch.zeros(2, 4), "same shape"),
        (torch.randn(11, 5), torch.randn(11, 5), "too many"),
    ],
)
def test_layernorm_effect_rejects_bad_arguments(before, after, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_layernorm_effect(before, after)


# --- plot_activation_functions ------------------------------------------------------------


def test_activation_functions_draws_functions_left_and_derivatives_right():
    x = torch.linspace(-3, 3, 61, requires_grad=True)
    values = {"GELU": torch.nn.functional.gelu(x), "ReLU": torch.relu(x)}
    derivatives = {name: torch.autograd.grad(y.sum(), x, retain_graph=True)[0] for name, y in values.items()}

    fig = plots.plot_activation_functions(x, values, derivatives)

    left, right = fig.axes
    for ax, curves in ((left, values), (right, derivatives)):
        lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
        assert sorted(lines) == ["GELU", "ReLU"]
        np.testing.assert_allclose(lines["ReLU"].get_ydata(), curves["ReLU"].detach().numpy())
        assert ax.get_xlabel() == "input x" and ax.get_ylabel()
    assert right.get_ylabel() == "f′(x)"


def test_activation_functions_rejects_mismatched_arguments():
    x = torch.linspace(-1, 1, 5)
    with pytest.raises(ValueError, match="same functions"):
        plots.plot_activation_functions(x, {"ReLU": torch.relu(x)}, {"GELU": x})
    with pytest.raises(ValueError, match="values for 5 inputs"):
        plots.plot_activation_functions(x, {"ReLU": torch.zeros(4)}, {"ReLU": torch.zeros(4)})
    with pytest.raises(ValueError, match="empty"):
        plots.plot_activation_functions(x, {}, {})


# --- plot_gradient_magnitudes -------------------------------------------------------------


def test_gradient_magnitudes_one_line_per_network_on_a_log_scale():
    grads = {"without shortcuts": [1e-7, 1e-5, 1e-3], "with shortcuts": torch.tensor([0.1, 0.2, 0.5])}

    ax = plots.plot_gradient_magnitudes(grads)

    assert ax.get_yscale() == "log"
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == list(grads)
    np.testing.assert_allclose(lines[0].get_ydata(), grads["without shortcuts"])
    assert list(lines[1].get_xdata()) == [0, 1, 2]
    assert "layer" in ax.get_xlabel() and "gradient" in ax.get_ylabel()


def test_gradient_magnitudes_rejects_zero_and_empty():
    with pytest.raises(ValueError, match="positive"):
        plots.plot_gradient_magnitudes({"dead": [0.0, 1.0]})
    with pytest.raises(ValueError, match="empty"):
        plots.plot_gradient_magnitudes({})


# --- plot_parameter_counts ----------------------------------------------------------------


def test_parameter_counts_bars_in_order_with_counts_and_memory():
    counts = {"token embedding": 38_597_376, "final LayerNorm": 1536, "all": 163_009_536}

    ax = plots.plot_parameter_counts(counts)

    bars = ax.patches
    assert len(bars) == 3
    assert [bar.get_width() for bar in bars] == pytest.approx([38.597376, 0.001536, 163.009536])
    assert [t.get_text() for t in ax.get_yticklabels()] == list(counts)
    shown = [t.get_text() for t in ax.texts]
    assert any("163,009,536" in t and "621.83 MB" in t for t in shown)
    assert any("1,536" in t and "6.0 KB" in t for t in shown)
    assert ax.yaxis_inverted()  # the first entry at the top
    assert "millions" in ax.get_xlabel()


def test_parameter_counts_memory_in_gigabytes_and_other_precisions():
    ax = plots.plot_parameter_counts({"XL": 1_637_792_000}, bytes_per_parameter=2)
    assert "3.05 GB" in ax.texts[0].get_text()
    with pytest.raises(ValueError, match="empty"):
        plots.plot_parameter_counts({})


# --- plot_next_token_probabilities --------------------------------------------------------


class DigitTokenizer:
    def decode(self, ids):
        return "".join(f"<{i}>" for i in ids)


def test_next_token_probabilities_sorted_curve_and_top_tokens():
    probs = torch.softmax(torch.tensor([0.0, 3.0, 1.0, 2.0, 0.5]), dim=-1)

    fig = plots.plot_next_token_probabilities(probs, DigitTokenizer(), top_k=3, title="toy")

    left, right = fig.axes
    curve = left.get_lines()[0]
    np.testing.assert_allclose(curve.get_ydata(), np.sort(probs.numpy())[::-1], rtol=1e-6)
    assert left.get_yscale() == "log"
    uniform = [line for line in left.get_lines() if line.get_linestyle() == "--"]
    assert uniform and uniform[0].get_ydata()[0] == pytest.approx(0.2)
    assert [t.get_text() for t in right.get_yticklabels()] == ["'<1>'", "'<3>'", "'<2>'"]
    assert [bar.get_width() for bar in right.patches] == pytest.approx(probs[[1, 3, 2]].tolist())
    assert fig.get_suptitle() == "toy"


def test_next_token_probabilities_without_tokenizer_shows_ids():
    fig = plots.plot_next_token_probabilities(torch.full((8,), 1 / 8), top_k=2)
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["0", "1"]


@pytest.mark.parametrize(
    ("probs", "kwargs", "message"),
    [
        (torch.tensor([2.0, -1.0]), {}, "softmax"),
        (torch.ones(3, 3) / 9, {}, "1-d"),
        (torch.full((4,), 0.25), {"top_k": 5}, "at most 4"),
    ],
)
def test_next_token_probabilities_rejects_bad_arguments(probs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_next_token_probabilities(probs, **kwargs)
