"""The cases each task is graded on.

`public_cases(task)` are fixed: their reference outputs ship with the course as the
self-check fixtures. `hidden_cases(task, seed)` are the public ones plus more, drawn from a
seed chosen at grading time (batch sizes 1 and >1, fewer tokens than context_length,
d_in != d_out, several head counts, qkv_bias on and off, float64, dropout in train mode).
Because the public cases are part of the hidden ones, a self-check can never fail on code
that the grader accepts.
"""
import numpy as np
import torch

from gptcourse.probes import constructor_arguments
from gptcourse.records import Case
from grader.reference import reference_object

PUBLIC_SEED = 20240917

TOY_INPUTS = np.array(
    [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
     [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]],
    dtype=np.float64,
)


# ------------------------------------------------------------------------------------------
# Building blocks
# ------------------------------------------------------------------------------------------

def _label(shape, dtype, **settings):
    if len(shape) == 3:
        text = f"a batch of {shape[0]} x {shape[1]} tokens x {shape[2]} features"
    else:
        text = f"{shape[0]} tokens x {shape[1]} features"
    extra = ", ".join(f"{k}={v}" for k, v in settings.items())
    return f"{text}{', ' + extra if extra else ''}, {dtype}"


def _module_arrays(task_id, args, rng, x_shape, identity_out_proj=False):
    """Input, weights for every reference parameter, and a gradient seed."""
    positional, keywords = constructor_arguments(Case(task_id, "forward", "", args))
    module = reference_object(task_id)(*positional, **keywords)
    arrays = {"x": rng.normal(size=x_shape)}
    for name, param in module.named_parameters():
        scale = 0.1 if name.endswith("bias") else 0.6
        arrays["state/" + name] = rng.normal(scale=scale, size=tuple(param.shape))
    if identity_out_proj:
        # With out_proj the identity, the output is the heads' context vectors themselves,
        # which lets the judge check the dropout pattern head by head.
        arrays["state/out_proj.weight"] = np.eye(args["d_out"])
        arrays["state/out_proj.bias"] = np.zeros(args["d_out"])
    width = args["d_out"] * (args["num_heads"] if task_id == "3.1" else 1)
    arrays["grad_seed"] = rng.normal(size=x_shape[:-1] + (width,))
    return arrays


def _add_future_variant(arrays, args, rng):
    """x_future: the same tokens up to position t, new ones after it."""
    x = arrays["x"]
    t = max(0, x.shape[1] // 2 - 1)
    future = x.copy()
    future[:, t + 1:] = rng.normal(size=future[:, t + 1:].shape)
    arrays["x_future"] = future
    args["causal_t"] = t


def _function_case(task_id, rng, shape, dtype="float32", d_k=None, inputs=None):
    x = inputs if inputs is not None else rng.normal(size=shape)
    if task_id == "2.1":
        arrays = {"x": x, "grad_seed": rng.normal(size=x.shape)}
        return Case(task_id, "forward", _label(x.shape, dtype), {}, arrays, dtype)
    scores = 2.0 * x
    arrays = {"scores": scores, "grad_seed": rng.normal(size=scores.shape)}
    label = f"attention scores of shape {tuple(scores.shape)}, d_k={d_k}, {dtype}"
    return Case(task_id, "forward", label, {"d_k": d_k}, arrays, dtype)


def _module_case(task_id, rng, kind="forward", batch=2, tokens=6, dtype="float32", **args):
    args.setdefault("qkv_bias", False)
    causal = task_id in ("2.5", "3.1", "3.2")
    if causal:
        args.setdefault("context_length", tokens)
        args.setdefault("dropout", 0.0)
    if task_id in ("3.1", "3.2"):
        args.setdefault("num_heads", 2)
    if kind == "raises":
        label = (f"d_out={args['d_out']} with num_heads={args['num_heads']} "
                 f"(not divisible)")
        return Case(task_id, kind, label, args, {}, dtype)
    x_shape = (tokens, args["d_in"]) if task_id in ("2.2", "2.3") else (batch, tokens, args["d_in"])
    arrays = _module_arrays(task_id, args, rng, x_shape, identity_out_proj=(kind == "dropout" and task_id == "3.2"))
    if causal and kind == "forward":
        _add_future_variant(arrays, args, rng)
    shown = {k: v for k, v in args.items() if k not in ("causal_t",) and not (k == "qkv_bias" and not v)}
    prefix = "train mode with dropout: " if kind == "dropout" else ""
    return Case(task_id, kind, prefix + _label(x_shape, dtype, **shown), args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# The case lists
# ------------------------------------------------------------------------------------------

def public_cases(task_id):
    rng = np.random.default_rng(PUBLIC_SEED + int(task_id.replace(".", "")))
    return _PUBLIC[task_id](rng)


def hidden_cases(task_id, seed):
    rng = np.random.default_rng([int(seed), int(task_id.replace(".", ""))])
    return public_cases(task_id) + _HIDDEN[task_id](rng)


_PUBLIC = {
    "2.1": lambda rng: [
        _function_case("2.1", rng, None, inputs=TOY_INPUTS.copy()),
        _function_case("2.1", rng, (2, 5, 3)),
    ],
    "2.2": lambda rng: [
        _module_case("2.2", rng, tokens=6, d_in=3, d_out=2),
        _module_case("2.2", rng, tokens=5, d_in=4, d_out=3),
    ],
    "2.3": lambda rng: [
        _module_case("2.3", rng, tokens=6, d_in=3, d_out=2),
        _module_case("2.3", rng, tokens=5, d_in=4, d_out=3, qkv_bias=True),
    ],
    "2.4": lambda rng: [
        _function_case("2.4", rng, (6, 6), d_k=2),
        _function_case("2.4", rng, (2, 5, 5), d_k=3),
    ],
    "2.5": lambda rng: [
        _module_case("2.5", rng, batch=2, tokens=6, d_in=3, d_out=2),
        _module_case("2.5", rng, batch=1, tokens=4, d_in=5, d_out=3, context_length=7, qkv_bias=True),
        _module_case("2.5", rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=3, dropout=0.5),
    ],
    "3.1": lambda rng: [
        _module_case("3.1", rng, batch=2, tokens=6, d_in=3, d_out=2, num_heads=2),
        _module_case("3.1", rng, batch=1, tokens=4, d_in=5, d_out=3, num_heads=3, context_length=7, qkv_bias=True),
        _module_case("3.1", rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=2, num_heads=2, dropout=0.5),
    ],
    "3.2": lambda rng: [
        _module_case("3.2", rng, batch=2, tokens=6, d_in=3, d_out=4, num_heads=2),
        _module_case("3.2", rng, batch=1, tokens=4, d_in=5, d_out=6, num_heads=3, context_length=7, qkv_bias=True),
        _module_case("3.2", rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=4, num_heads=2, dropout=0.5),
        _module_case("3.2", rng, kind="raises", d_in=4, d_out=5, num_heads=2, context_length=6),
    ],
}

_HIDDEN = {
    "2.1": lambda rng: [
        _function_case("2.1", rng, (5, 4)),
        _function_case("2.1", rng, (1, 4, 6), dtype="float64"),
        _function_case("2.1", rng, (3, 7, 2)),
    ],
    "2.2": lambda rng: [
        _module_case("2.2", rng, tokens=7, d_in=2, d_out=5),
        _module_case("2.2", rng, tokens=4, d_in=6, d_out=3, dtype="float64"),
        _module_case("2.2", rng, tokens=1, d_in=3, d_out=2),
    ],
    "2.3": lambda rng: [
        _module_case("2.3", rng, tokens=7, d_in=2, d_out=5),
        _module_case("2.3", rng, tokens=4, d_in=6, d_out=3, qkv_bias=True, dtype="float64"),
        _module_case("2.3", rng, tokens=3, d_in=4, d_out=4, qkv_bias=True),
    ],
    "2.4": lambda rng: [
        _function_case("2.4", rng, (2, 3, 4, 4), d_k=4, dtype="float64"),
        _function_case("2.4", rng, (1, 7, 7), d_k=8),
        _function_case("2.4", rng, (1, 1), d_k=5),
    ],
    "2.5": lambda rng: [
        _module_case("2.5", rng, batch=3, tokens=5, d_in=4, d_out=6, context_length=9, qkv_bias=True),
        _module_case("2.5", rng, batch=2, tokens=7, d_in=6, d_out=4, dropout=0.3, dtype="float64"),
        _module_case("2.5", rng, batch=1, tokens=1, d_in=3, d_out=2, context_length=4),
        _module_case("2.5", rng, kind="dropout", batch=3, tokens=4, d_in=3, d_out=5, context_length=8, dropout=0.5),
    ],
    "3.1": lambda rng: [
        _module_case("3.1", rng, batch=3, tokens=5, d_in=4, d_out=2, num_heads=1, context_length=9, qkv_bias=True),
        _module_case("3.1", rng, batch=2, tokens=6, d_in=2, d_out=3, num_heads=4, dropout=0.3, dtype="float64"),
        _module_case("3.1", rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=2, num_heads=3, context_length=6, dropout=0.5),
    ],
    "3.2": lambda rng: [
        _module_case("3.2", rng, batch=3, tokens=5, d_in=4, d_out=6, num_heads=1, context_length=9, qkv_bias=True),
        _module_case("3.2", rng, batch=2, tokens=6, d_in=3, d_out=6, num_heads=3, dropout=0.3, dtype="float64"),
        _module_case("3.2", rng, batch=2, tokens=5, d_in=5, d_out=4, num_heads=4, context_length=8),
        _module_case("3.2", rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=6, num_heads=3, context_length=6, dropout=0.5),
        _module_case("3.2", rng, kind="raises", d_in=3, d_out=7, num_heads=3, context_length=6),
    ],
}


# ------------------------------------------------------------------------------------------
# What the judge needs besides the reference's observations: for dropout cases, the
# attention weights and values of every head in eval mode, computed from the case's weights.
# ------------------------------------------------------------------------------------------

def dropout_internals(case):
    if case.kind != "dropout":
        return {}
    a = case.arrays
    x = torch.tensor(a["x"], dtype=torch.float64)
    if case.task == "2.5":
        heads = [_head_internals(x, a, "")]
    elif case.task == "3.1":
        heads = [_head_internals(x, a, f"heads.{h}.") for h in range(case.args["num_heads"])]
    else:
        heads = _split_head_internals(x, a, case.args["num_heads"])
    weights = torch.stack([w for w, _ in heads], dim=1)
    values = torch.stack([v for _, v in heads], dim=1)
    return {"internals/weights": weights.numpy(), "internals/values": values.numpy()}


def _linear(x, a, prefix):
    w = torch.tensor(a[prefix + ".weight"], dtype=torch.float64)
    bias_key = prefix + ".bias"
    b = torch.tensor(a[bias_key], dtype=torch.float64) if bias_key in a else 0.0
    return x @ w.T + b


def _causal_softmax(queries, keys):
    tokens = queries.shape[-2]
    scores = queries @ keys.transpose(-2, -1)
    future = torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), diagonal=1)
    return torch.softmax(scores.masked_fill(future, float("-inf")) / keys.shape[-1] ** 0.5, dim=-1)


def _head_internals(x, a, prefix):
    q, k, v = (_linear(x, a, f"state/{prefix}{name}") for name in ("W_query", "W_key", "W_value"))
    return _causal_softmax(q, k), v


def _split_head_internals(x, a, num_heads):
    b, t, _ = x.shape

    def split(name):
        y = _linear(x, a, f"state/{name}")
        return y.view(b, t, num_heads, -1).transpose(1, 2)

    q, k, v = split("W_query"), split("W_key"), split("W_value")
    weights = _causal_softmax(q, k)
    return [(weights[:, h], v[:, h]) for h in range(num_heads)]
