"""Chapter 04, a GPT model: its tasks, their probes, the dropout judges and the hints.

Dropout is judged without assuming how a student draws random numbers. The grader's side picks
weights that make the parts around the dropout layers deterministic (an attention whose
values are zero, a feed-forward whose last layer is zero), and puts every output that some
pattern of dropped features can give into `internals/...`; a train-mode output is right when
each of its rows is one of them. No correct implementation can fail that (no false failures),
and dropout in another place, or none at all, gives rows no pattern explains.
"""
import numpy as np
import torch
import torch.nn as nn

from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.chapters.toys import NextTokenModel
from gptcourse.checking.contract import Contract, ReferenceValue
from gptcourse.checking.judge import tolerances

CHAPTER = "04_gpt_model"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = ()


# ------------------------------------------------------------------------------------------
# Constructor arguments (the grader's side builds the reference with the same functions)
# ------------------------------------------------------------------------------------------

def layer_norm_arguments(args):
    """LayerNorm(emb_dim)."""
    return [args["emb_dim"]], {}


def no_arguments(args):
    """GELU()."""
    return [], {}


def config_arguments(args):
    """FeedForward(cfg), TransformerBlock(cfg), GPTModel(cfg): a fresh copy of the case's
    configuration, so that code that changes the dict cannot change the test's."""
    return [dict(args["cfg"])], {}


# ------------------------------------------------------------------------------------------
# Attributes the contract pins down, described so that a difference reads well
# ------------------------------------------------------------------------------------------

def _describe_child(module):
    if isinstance(module, nn.Linear):
        return f"Linear({module.in_features}, {module.out_features}, bias={module.bias is not None})"
    return type(module).__name__  # GELU, ours or nn.GELU(approximate="tanh"): numbers decide


def describe_layers(module, case):
    """FeedForward.layers: an nn.Sequential, and what it holds in order."""
    layers = getattr(module, "layers", None)
    if not isinstance(layers, nn.Sequential):
        return "missing" if layers is None else f"a {type(layers).__name__} (expected an nn.Sequential)"
    return "nn.Sequential(" + ", ".join(_describe_child(m) for m in layers) + ")"


def describe_attention(module, case):
    """TransformerBlock.att: a MultiHeadAttention over emb_dim with the configuration's sizes."""
    att = getattr(module, "att", None)
    if att is None:
        return "missing"
    if type(att).__name__ != "MultiHeadAttention":
        return f"a {type(att).__name__} (expected your MultiHeadAttention from chapter 03)"
    mask = dict(att.named_buffers(recurse=False)).get("mask")
    dropout = getattr(att, "dropout", None)
    parts = [f"d_out={getattr(att, 'd_out', '?')}", f"num_heads={getattr(att, 'num_heads', '?')}",
             f"context_length={mask.shape[-1] if mask is not None else '?'}",
             f"dropout={getattr(dropout, 'p', '?')}",
             f"qkv_bias={getattr(getattr(att, 'W_query', None), 'bias', None) is not None}"]
    return "MultiHeadAttention(" + ", ".join(parts) + ")"


# Described by probes.describe_attribute unless named here: "a LayerNorm" against
# "nn.LayerNorm", "nn.Dropout(p=0.1)", "nn.Sequential of 12 TransformerBlock (12 distinct objects)".
BLOCK_ATTRIBUTES = ("att", "ff", "norm1", "norm2", "drop_shortcut")
MODEL_ATTRIBUTES = ("tok_emb", "pos_emb", "drop_emb", "trf_blocks", "final_norm", "out_head")


def _drop_rate_zero(args):
    return args["cfg"]["drop_rate"] == 0.0


def module_probe(attributes, describe=None):
    return kinds.ModuleForward(config_arguments, attributes, describe=describe,
                               same_in_train_mode=_drop_rate_zero)


# ------------------------------------------------------------------------------------------
# Dropout judges
# ------------------------------------------------------------------------------------------

def _tolerance(case):
    """Elementwise np.isclose with the judge's tolerances for the case's device."""
    rtol, atol = tolerances(case.device)
    return lambda a, b: np.abs(a - b) <= atol + rtol * np.abs(b)


def _train_outputs(got, expected):
    return [got.get(key) for key in sorted(k for k in expected if k.startswith("train_"))]


def block_dropout_problem(got, expected, case):
    """TransformerBlock in train mode, with the attention's values zeroed by the case.

    Then the attention sub-block adds a constant row to x, of which dropout keeps some
    features: internals/after_attention[r, k] is row r after the first shortcut for the k-th
    pattern of kept features, internals/ff_update[r, k] what the feed-forward sub-block then
    adds when dropout keeps everything. Each output feature must be h or h + update.
    """
    after_attention = expected["internals/after_attention"]  # (rows, patterns, emb_dim)
    update = expected["internals/ff_update"]  # (rows, patterns, emb_dim)
    patterns = expected["internals/patterns"]  # (patterns, emb_dim) of 0/1
    close = _tolerance(case)
    dropped_attention = dropped_ff = 0
    for out in _train_outputs(got, expected):
        if not isinstance(out, np.ndarray) or out.size != after_attention.shape[0] * after_attention.shape[2]:
            return None  # the plain comparison reports the shape
        for r, row in enumerate(out.reshape(after_attention.shape[0], -1)):
            kept = close(row, after_attention[r])  # (patterns, emb_dim): the update was dropped
            full = close(row, after_attention[r] + update[r])  # the update was kept
            explained = np.flatnonzero(np.all(kept | full, axis=-1))
            if explained.size == 0:
                return _block_dropout_message(row, got, case)
            k = explained[0]
            dropped_attention += int((patterns[k] == 0).sum())
            dropped_ff += int((kept[k] & ~full[k]).sum())
    drop_rate = case.args["cfg"]["drop_rate"]
    if dropped_attention == 0:
        return (f"in train mode with drop_rate={drop_rate}, the attention sub-block's output was never dropped: apply "
                f"self.drop_shortcut to the output of self.att, before adding the shortcut")
    if dropped_ff == 0:
        return (f"in train mode with drop_rate={drop_rate}, the feed-forward sub-block's output was never dropped: "
                f"apply self.drop_shortcut to the output of self.ff, before adding the shortcut")
    return None


def _same_as_eval_mode(got):
    """Every train-mode output equals the eval-mode one: no dropout at all."""
    evaluated = got.get("out_eval")
    trained = [got[key] for key in got if key.startswith("train_")]
    return isinstance(evaluated, np.ndarray) and all(
        isinstance(out, np.ndarray) and out.shape == evaluated.shape and np.allclose(out, evaluated)
        for out in trained)


def _block_dropout_message(row, got, case):
    if _same_as_eval_mode(got):
        return ("in train mode the output is the same as in eval mode: no dropout is applied in the block; "
                "apply self.drop_shortcut to the output of att and of ff, before adding each shortcut")
    if np.any(row == 0.0):
        return ("in train mode some output features are exactly 0: dropout is applied after the shortcut "
                "was added (to the sum), which drops the shortcut too; drop only the sub-block's output, "
                "x = self.drop_shortcut(x), then add the shortcut")
    return ("in train mode the output is not what dropping the two sub-blocks' outputs gives: in each "
            "sub-block apply self.drop_shortcut to the output of att (and of ff), then add the shortcut; "
            "dropout belongs nowhere else in the block (not on its input, not before a LayerNorm)")


def model_dropout_problem(got, expected, case):
    """GPTModel in train mode with one block whose attention adds a constant row and whose
    feed-forward adds nothing: each row of the logits must be one of the candidates that
    internals/logits lists for that row (every way drop_emb and the block's shortcut
    dropout can keep or drop each feature); internals/emb_dropped says, per candidate, how
    many features drop_emb dropped; internals/logits_without_emb_dropout, the rows a model
    without drop_emb gives (to say so)."""
    candidates = expected["internals/logits"]  # (rows, candidates, vocab)
    emb_dropped = expected["internals/emb_dropped"]  # (candidates,): features drop_emb dropped
    close = _tolerance(case)
    dropped = 0
    for out in _train_outputs(got, expected):
        if not isinstance(out, np.ndarray) or out.size != candidates.shape[0] * candidates.shape[2]:
            return None
        for r, row in enumerate(out.reshape(candidates.shape[0], -1)):
            explained = np.flatnonzero(np.all(close(row, candidates[r]), axis=-1))
            if explained.size == 0:
                undropped = expected["internals/logits_without_emb_dropout"][r]
                if np.all(close(row, undropped), axis=-1).any():
                    drop_rate = case.args["cfg"]["drop_rate"]
                    return (f"in train mode with drop_rate={drop_rate} the embeddings are not dropped out: apply "
                            f"self.drop_emb to tok_embeds + pos_embeds, before the transformer blocks")
                return ("in train mode the logits are not what dropout on the embeddings gives: apply "
                        "self.drop_emb once, to tok_embeds + pos_embeds, before the transformer blocks "
                        "(not after them, not to the logits, not to one of the two embeddings alone)")
            dropped += int(emb_dropped[explained].min())
    if dropped == 0:
        drop_rate = case.args["cfg"]["drop_rate"]
        return (f"in train mode with drop_rate={drop_rate} no embedding feature was ever dropped: apply "
                f"self.drop_emb to tok_embeds + pos_embeds in forward")
    return None


# ------------------------------------------------------------------------------------------
# generate_text_simple: the model it drives (NextTokenModel: gptcourse.checking.chapters.toys)
# ------------------------------------------------------------------------------------------

def _model_for_generation(probe):
    """The model the case describes: the toy NextTokenModel, or a small GPTModel (the
    reference's in grading) with the case's weights; every forward call notes the grad mode."""
    args = probe.case.args
    if args["model"] == "next_token":
        model = NextTokenModel(args["vocab_size"], args["context_length"])
    else:
        model = probe.name("GPTModel")(dict(args["cfg"]))
        model.grad_enabled = []
        model.register_forward_pre_hook(lambda m, inputs: m.grad_enabled.append(torch.is_grad_enabled()))
    probe.kept["generation_model"] = probe.module_input("model", model)
    return probe.kept["generation_model"]


def generate_arguments(probe):
    """generate_text_simple(model, idx, max_new_tokens, context_size)."""
    args = probe.case.args
    model = _model_for_generation(probe)
    return [model, probe.input("idx"), args["max_new_tokens"], args["context_size"]], {}


def record_grad_mode(probe):
    calls = probe.kept["generation_model"].grad_enabled
    probe.record_value("model_calls_with_grad", sum(bool(c) for c in calls), "the model calls with gradients on")


# ------------------------------------------------------------------------------------------


KEY_NAMES = {
    "ids": "The returned token ids",
    "model_calls_with_grad": "Model calls made with gradients enabled",
    "after/idx": "The input idx after the call",
}

ERROR_HINTS = [
    (r"no parameter named '(norm1|norm2|final_norm)\.(scale|shift)'",
     "the LayerNorms must be the chapter's LayerNorm (Task 4.1), with parameters scale and shift, one "
     "separate instance each (norm2 is not norm1): PyTorch's nn.LayerNorm calls them weight and bias",
     ("4.4", "4.5")),
    (r"no parameter named '(scale|shift)'",
     "LayerNorm's parameters are named scale and shift, each an nn.Parameter: "
     "self.scale = nn.Parameter(torch.ones(emb_dim))", ("4.1",)),
    (r"no parameter named 'layers\.",
     "the three layers live in self.layers = nn.Sequential(Linear, GELU(), Linear), in that order, so "
     "that their parameters are layers.0.weight, layers.0.bias, layers.2.weight, layers.2.bias",
     ("4.3",)),
    (r"parameter 'layers\.\d\.weight' has shape",
     "the hidden layer of the feed-forward network has 4 * emb_dim units: Linear(emb_dim, 4 * emb_dim), "
     "then Linear(4 * emb_dim, emb_dim)", ("4.3",)),
    (r"no parameter named 'out_head\.weight'",
     "out_head needs its own weight: Linear(emb_dim, vocab_size, bias=False); sharing the token "
     "embedding's weight (weight tying) is not this task's model", ("4.5",)),
    (r"no parameter named 'trf_blocks\.",
     "trf_blocks must be an nn.Sequential of n_layers separate TransformerBlock(cfg) objects, "
     "nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg['n_layers'])])", ("4.5",)),
    (r"index out of range in self",
     "an embedding looked up an index past the end of its table: pos_emb has context_length rows and "
     "the positions are torch.arange(num_tokens) with num_tokens = in_idx.shape[1]", ("4.5",)),
    (r"must match the size of tensor|The size of tensor a",
     "the token and position embeddings do not line up: in_idx has shape (batch, num_tokens), so the "
     "positions are torch.arange(num_tokens) with num_tokens = in_idx.shape[1]", ("4.5",)),
    (r"index out of range in self",
     "the model got more tokens than its context length: crop the input to the last context_size "
     "tokens before every call, idx[:, -context_size:]", ("4.6",)),
    (r"Tensors must have same number of dimensions|Sizes of tensors must match",
     "the next token must be appended as a column of shape (batch, 1): argmax(logits, dim=-1, "
     "keepdim=True), then torch.cat((idx, idx_next), dim=1)", ("4.6",)),
    (r"is not a Module subclass",
     "nn.Sequential takes module objects: write GELU() with parentheses (an instance), not the class GELU",
     ("4.3",)),
    (r"only one element tensors can be converted|must be real number, not Tensor",
     "math.tanh and math.sqrt work on Python numbers only: use torch.tanh on tensors (math.sqrt is fine "
     "for the constant sqrt(2 / pi))", ("4.2",)),
]


def _gelu_reference_hint(key, got, expected, case):
    """Values close to GELU's but not within tolerance: most likely the exact (erf) form."""
    have, want = got.get(key), expected.get(key)
    if key != "out" or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray) or have.shape != want.shape:
        return ""
    if np.nanmax(np.abs(have - want)) < 2e-3:
        return ("very close, but not the tanh approximation the task asks for: PyTorch's nn.GELU() and "
                "F.gelu use the exact erf form unless you pass approximate=\"tanh\"")
    return ""


def _gelu_constants_hint(key, got, expected, case):
    """An output of the form 0.5 x (1 + tanh(c (x + a x^3))) with other constants than the contract's:
    c and a are recovered from the output (atanh of the gate is linear in x and x^3) and named."""
    have, x = got.get(key), case.arrays.get("x")
    if key != "out" or not isinstance(have, np.ndarray) or not isinstance(x, np.ndarray) or have.shape != x.shape:
        return ""
    x, have = x.ravel().astype(np.float64), have.ravel().astype(np.float64)
    usable = np.abs(x) > 0.05
    gate = np.zeros_like(x)
    gate[usable] = 2 * have[usable] / x[usable] - 1  # tanh(c (x + a x^3)) if the form is right
    usable &= np.abs(gate) < 0.95  # away from tanh's flat ends, where atanh amplifies rounding
    if usable.sum() < 4:
        return ""
    features = np.stack([x[usable], x[usable] ** 3], axis=1)
    target = np.arctanh(gate[usable])
    (c, ca), *_ = np.linalg.lstsq(features, target, rcond=None)
    if not np.allclose(features @ [c, ca], target, atol=1e-3, rtol=1e-3) or abs(c) < 1e-6:
        return ""  # not of that form: the other hints and the plain difference say more
    a, right_c, right_a = ca / c, (2 / np.pi) ** 0.5, 0.044715
    if np.isclose(c, right_c, rtol=1e-3) and np.isclose(a, right_a, rtol=1e-3):
        return ""
    return (f"your output is 0.5 * x * (1 + tanh(c * (x + a * x**3))) with c = {c:.4f} and a = {a:.6f}: the "
            f"constants are c = sqrt(2 / pi) = {right_c:.4f} (math.sqrt(2 / math.pi)) and a = {right_a}")


def _layers_hint(key, got, expected, case):
    """FeedForward.layers with other sizes or other parts than the contract's."""
    have = (got.get("structure") or {}).get("layers", "")
    if key != "structure" or not isinstance(have, str) or not have.startswith("nn.Sequential("):
        return ""
    emb_dim = case.args["cfg"]["emb_dim"]
    if f"Linear({emb_dim}, {4 * emb_dim}" not in have:
        return (f"the hidden layer has 4 * emb_dim = {4 * emb_dim} units: Linear(emb_dim, 4 * emb_dim), "
                f"GELU(), Linear(4 * emb_dim, emb_dim)")
    if "GELU" not in have:
        return "the activation between the two Linear layers is GELU() from Task 4.2"
    if f"Linear({4 * emb_dim}, {emb_dim}" not in have:
        return (f"the second layer maps the 4 * emb_dim = {4 * emb_dim} hidden features back to emb_dim = {emb_dim}: "
                f"Linear(4 * emb_dim, emb_dim)")
    return ""


def _nan_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if isinstance(have, np.ndarray) and isinstance(want, np.ndarray) and have.dtype.kind == "f" \
            and np.isnan(have).any() and not np.isnan(want).any():
        return ("NaN where the reference has numbers: a row whose values are all equal has variance 0; "
                "eps = 1e-5 inside the square root, torch.sqrt(var + self.eps), keeps the division finite")
    return ""


def _gelu_overflow_hint(key, got, expected, case):
    """NaN or inf where the reference has numbers: exp overflowing in a tanh written by hand."""
    have, want = got.get(key), expected.get(key)
    if isinstance(have, np.ndarray) and isinstance(want, np.ndarray) and have.dtype.kind == "f" \
            and not np.isfinite(have).all() and np.isfinite(want).all():
        return ("NaN or inf where the reference has numbers: GELU stays finite for any input (about x for large "
                "positive x, about 0 for large negative x). A tanh written by hand with exp overflows: exp(u) is inf "
                "past about 88 in float32, and inf / inf is NaN; use torch.tanh")
    return ""


def _initial_value_hint(key, got, expected, case):
    if key in ("init/scale", "init/shift"):
        return ("right after creation scale must be all ones and shift all zeros "
                "(nn.Parameter(torch.ones(emb_dim)), nn.Parameter(torch.zeros(emb_dim))), so that a new "
                "LayerNorm only normalizes")
    return ""


def _size_hint(key, got, expected, case):
    have, want = got.get("children_parameters"), expected.get("children_parameters")
    if key == "num_parameters" and isinstance(have, dict) and isinstance(want, dict):
        head = want.get("out_head")
        if head and got.get(key) == expected.get(key) - head:
            return ("out_head's parameters are not counted: it shares the token embedding's weight "
                    "(weight tying); the task's GPTModel keeps a separate out_head, 163,009,536 parameters "
                    "for GPT_CONFIG_124M")
        for name, count in want.items():
            if have.get(name) != count:
                return (f"{name} has {have.get(name, 0):,} parameters, expected {count:,} (the total: "
                        f"{got.get(key):,}, expected {expected.get(key):,})")
    return ""


def _generation_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key == "model_calls_with_grad":
        return ("the model ran with gradients enabled, recording a graph no one needs: call it inside "
                "`with torch.no_grad():`")
    if key != "ids" or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray):
        return ""
    new = case.args["max_new_tokens"]
    if have.shape == (want.shape[0], new):
        return "only the new tokens are returned: return the whole sequence, the input followed by the new tokens"
    if have.ndim == 2 and have.shape[0] == want.shape[0] and have.shape[1] == want.shape[1] - 1:
        return f"one token too few: the loop must add exactly max_new_tokens={new} tokens"
    if have.ndim == 2 and have.shape[0] != want.shape[0]:
        return ("the batch size changed: append the new tokens along the token dimension, "
                "torch.cat((idx, idx_next), dim=1)")
    if have.shape == want.shape:
        return ("other tokens than greedy decoding picks: at every step take the token with the largest "
                "logit at the last position, torch.argmax(logits[:, -1, :], dim=-1, keepdim=True), with no "
                "sampling; a softmax before the argmax changes nothing only over the last dimension (dim=-1)")
    return ""


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("`GPTModel(GPT_CONFIG_124M)` has 163,009,536 parameters, 124,412,160 without `out_head`.",
                   "tests/chapters/test_ch04.py::"
                   "test_gpt2_small_has_163_million_parameters_124_million_with_weight_tying"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "4.1": TaskSpec(
        contract=Contract(
            pinned=(
                "Parameters `scale` (ones) and `shift` (zeros) of size `emb_dim`, checked right after construction.",
                "Normalisation over the last dimension with the biased variance and `eps = 1e-5` inside the square "
                "root: cases hold a constant row and a row of tiny variance, where eps shows.",
                "Any number of leading dimensions; gradients to the input, `scale` and `shift`.",
            ),
            free=(
                "How the mean and the variance are computed (the task text asks for the computation written out; "
                "the checks see only the numbers).",
            )),
        probes={"forward": kinds.ModuleForward(layer_norm_arguments, ("scale", "shift"),
                                               initial_values=("scale", "shift"))},
        hints=(_nan_hint, _initial_value_hint)),
    "4.2": TaskSpec(
        contract=Contract(
            pinned=(
                "The tanh approximation of GELU with the constants `sqrt(2 / pi)` and `0.044715`: the exact erf "
                "form is close, and fails.",
                "Tensors of any shape, float32 and float64, gradients; the module has no parameters.",
                "Finite for any finite input: about `x` for large positive `x`, about 0 for large negative `x`. Cases "
                "run from -60 to 60 in float32 and from -200 to 200 in float64, where a tanh written by hand as "
                "`(exp(u) - exp(-u)) / (exp(u) + exp(-u))` overflows to NaN.",
            )),
        probes={"forward": kinds.ModuleForward(no_arguments)},
        hints=(_gelu_overflow_hint, _gelu_reference_hint, _gelu_constants_hint)),
    "4.3": TaskSpec(
        contract=Contract(
            pinned=(
                "`layers` is an `nn.Sequential` of a `Linear(emb_dim, 4 * emb_dim)`, a GELU and a "
                "`Linear(4 * emb_dim, emb_dim)`, both linear layers with a bias.",
                "The output is `layers(x)`; only `cfg[\"emb_dim\"]` is read.",
            ),
            free=("Which GELU module sits in the middle, as long as it computes the tanh form.",)),
        probes={"forward": module_probe(("layers",), {"layers": describe_layers})},
        hints=(_layers_hint, _gelu_reference_hint)),
    "4.4": TaskSpec(
        contract=Contract(
            pinned=(
                "Attributes `att` (a `MultiHeadAttention` over `emb_dim` with the configuration's heads, context "
                "length, dropout and `qkv_bias`), `ff` (a `FeedForward`), `norm1` and `norm2` (two separate "
                "`LayerNorm`s) and `drop_shortcut` (an `nn.Dropout` of `drop_rate`).",
                "Pre-LayerNorm: for the attention, then for the feed-forward sub-block, normalise, apply it, drop "
                "out its output with `drop_shortcut`, add the sub-block's input.",
                "In train mode every row must be explained by dropping features of the two sub-blocks' outputs "
                "(never of the shortcut, never of the sum).",
            ),
            free=("The order in which the attributes are made.",)),
        probes={"forward": module_probe(BLOCK_ATTRIBUTES, {"att": describe_attention}),
                "dropout": kinds.ModuleDropout(config_arguments, block_dropout_problem)},
        hints=(_nan_hint,)),
    "4.5": TaskSpec(
        contract=Contract(
            pinned=(
                "Attributes `tok_emb`, `pos_emb`, `drop_emb`, `trf_blocks` (an `nn.Sequential` of `n_layers` "
                "separate blocks), `final_norm` and `out_head` (`emb_dim` to `vocab_size`, no bias).",
                "Logits `(B, T, vocab_size)` for `T` up to the context length; `drop_emb` on the sum of the two "
                "embeddings, before the blocks.",
                "A separate `out_head` (no weight tying): 163,009,536 parameters for `GPT_CONFIG_124M`, counted on "
                "the meta device part by part, and the right count with `qkv_bias=True`.",
            )),
        probes={"forward": module_probe(MODEL_ATTRIBUTES),
                "dropout": kinds.ModuleDropout(config_arguments, model_dropout_problem),
                "size": kinds.ModuleSize(config_arguments)},
        hints=(_size_hint,)),
    "4.6": TaskSpec(
        contract=Contract(
            pinned=(
                "Greedy: at each of the `max_new_tokens` steps the sequence is cut to its last `context_size` "
                "tokens, the largest logit of the last position is taken and appended.",
                "Returns the input followed by the new tokens (the input alone for `max_new_tokens=0`), leaves "
                "`idx` unchanged, and runs the model without gradients.",
            ),
            free=(
                "Whether the function switches the model to eval mode: the caller does, and the checks do not look.",
            )),
        probes={"generate": kinds.Function(generate_arguments, outputs=(("ids", "the returned token ids"),),
                                           tensors=False, device_pass=True, also=record_grad_mode)},
        hints=(_generation_hint,)),
}
