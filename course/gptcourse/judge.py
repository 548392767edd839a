"""Decide whether a task's observations are right, and say what is wrong in plain words.

`judge` compares what a probe observed on the student's code (`got`) with what it observed
on the reference (`expected`). When they differ it tries, in order:
1. a known wrong variant whose observations match the student's ("looks like you ...");
2. a property check that explains the symptom (rows not summing to 1, future tokens
   leaking into the past, ...);
3. the plain difference (shape, largest difference and where).
It works on plain data only, so the grader can run it in a process that never ran
student code.
"""
import itertools
import re

import numpy as np

from .tasks import get_task

# What each observation key means, for messages.
KEY_NAMES = {
    "structure": "Module attributes",
    "extra_parameters": "Module parameters",
    "weights": "Attention weights",
    "context": "Context vectors",
    "out": "Output of forward (eval mode)",
    "x_after": "Input after the call",
    "grad/x": "Gradient with respect to the input",
    "out_future_prefix": "Output up to position t when later tokens change",
    "out_train": "Output in train mode with dropout=0.0",
    "out_eval": "Output in eval mode (after a train-mode pass)",
    "raises": "Check that d_out is divisible by num_heads",
}

# Exception text -> what probably happened. The first match wins.
ERROR_HINTS = [
    (r"only supports boolean masks|expected BoolTensor|mask.*bool",
     "masked_fill needs a boolean mask: use self.mask.bool()[:num_tokens, :num_tokens]"),
    (r"same device|Expected all tensors to be on the same device|device type",
     "a tensor is on the wrong device: tensors created inside forward stay on the CPU; register the "
     "mask with self.register_buffer so .to(device) moves it, or create tensors with device=x.device"),
    (r"view size is not compatible|view\(\) on a non-contiguous|use \.reshape",
     "after a transpose the tensor is not contiguous: call .contiguous() before .view (or use .reshape)"),
    (r"must match the size of tensor|The size of tensor a",
     "a size mismatch: is the mask truncated to the number of tokens "
     "(mask[:num_tokens, :num_tokens]) and are you transposing the right dimensions?"),
    (r"mat1 and mat2 shapes cannot be multiplied|size mismatch|shapes cannot be multiplied",
     "a matrix product with mismatched shapes: check which dimensions you transpose, and remember "
     "that nn.Linear stores its weight as (out_features, in_features)"),
    (r"expected scalar type|dtype|Found dtype",
     "mixed dtypes: create new tensors with the input's dtype (and device), e.g. torch.ones(..., "
     "dtype=x.dtype, device=x.device)"),
    (r"before Module.__init__\(\) call|has no attribute '_modules'|has no attribute '_parameters'",
     "call super().__init__() first in your __init__"),
    (r"positional argument|unexpected keyword argument|takes \d+ positional",
     "the signature differs from the task's: check the names and order of the arguments"),
    (r"Dimension out of range|dimension .* out of range",
     "a dimension index out of range: does your code handle batched input (batch, tokens, dim)?"),
    (r"\.T on a tensor|The use of `x\.T` on tensors of dimension other than 2",
     "`.T` only works on 2-D tensors: use .transpose(-2, -1) to swap the last two dimensions"),
    (r"is not defined", "a name is not defined: graded cells run with the setup cell's imports and the "
     "earlier graded names only; define helpers inside your solution cell"),
    (r"SystemExit", "your code tried to exit the Python process"),
    (r"can't allocate memory|out of memory|MemoryError|Cannot allocate memory",
     "your code tried to allocate far more memory than this task needs"),
]


def error_hint(error):
    text = f"{error['type']}: {error['message']}"
    for pattern, hint in ERROR_HINTS:
        if re.search(pattern, text):
            return hint
    return ""


def describe_error(error):
    if error["type"] == "NotImplementedError":
        return "not implemented yet: replace `raise NotImplementedError()` with your code"
    where = f" at {error['where']}" if error.get("where") else ""
    if error.get("ours"):
        message = f"while {error['step']}: {error['message']}"
    else:
        message = f"{error['type']} while {error['step']}{where}" + (f": {error['message']}" if error["message"] else "")
    hint = error_hint(error)
    return f"{message} — {hint}" if hint else message


def tolerances(device):
    # GPU kernels sum in a different order than the CPU's: allow a little more.
    return (1e-4, 1e-4) if str(device).startswith("cuda") else (1e-4, 1e-5)


def _close(a, b, device="cpu"):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        rtol, atol = tolerances(device)
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return a == b


def _array_difference(name, got, expected):
    if got is None:
        return (f"{name}: no gradient reached it — something in your code cuts the graph "
                f"(.detach(), .data, .item(), numpy, torch.no_grad())")
    if got.shape != expected.shape:
        return f"{name}: shape {got.shape}, expected {expected.shape}"
    if np.isnan(got).any() and not np.isnan(expected).any():
        return (f"{name}: contains NaN, from a softmax over a row where every score is -inf "
                f"(does your mask hide the diagonal too?)")
    diff = np.abs(np.nan_to_num(got - expected, nan=np.inf))
    where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    return (f"{name}: not the reference's values, largest difference {diff.max():.4g} at index "
            f"{list(where)} (yours {got[where]:.4f}, expected {expected[where]:.4f})")


def _structure_difference(got, expected):
    lines = []
    for attr, want in expected.items():
        have = got.get(attr, "missing")
        if have != want:
            lines.append(f"`{attr}` should be {want}, yours is {have}")
    return "attributes differ from the spec: " + "; ".join(lines)


# ------------------------------------------------------------------------------------------
# Property checks: they explain a symptom when no known variant matches.
# ------------------------------------------------------------------------------------------

def _rows_sum_to_one(weights):
    return np.allclose(weights.sum(axis=-1), 1.0, atol=1e-4)


def _future_weights(weights):
    t = weights.shape[-1]
    return weights[..., np.triu_indices(t, k=1)[0], np.triu_indices(t, k=1)[1]]


def property_hint(task_id, key, got_obs, expected_obs, case):
    value = got_obs.get(key)
    if not isinstance(value, np.ndarray) or value.shape != np.shape(expected_obs.get(key)):
        return ""
    if key == "weights" and not _rows_sum_to_one(value):
        return ("each row of the attention weights should sum to 1: take the softmax over the last "
                "dimension (dim=-1)")
    if key == "weights" and task_id == "2.4" and np.any(_future_weights(value) != 0):
        return ("weights above the diagonal must be exactly 0: set the future scores to -inf "
                "before the softmax")
    if key == "out_future_prefix" and "out" in got_obs:
        t = case.args["causal_t"]
        if not _close(got_obs["out"][:, : t + 1], value):
            return ("the output at early positions changed when only later tokens changed: the "
                    "causal mask is not applied (is the result of masked_fill assigned?)")
    return ""


# ------------------------------------------------------------------------------------------
# Dropout: train-mode outputs must be what dropping attention weights can produce.
# ------------------------------------------------------------------------------------------

def dropout_problem(got_obs, expected_obs, case):
    """Check the train-mode outputs against every way of dropping attention weights.

    With attention weights A (eval mode) and values V, dropout on the weights makes row t of
    a head's output sum_j m_j * A[t, j] * V[j] / (1 - p) for some 0/1 pattern m. We try all
    patterns (rows are short), so any random-number usage is accepted; dropout applied
    anywhere else (scores, context vectors, output) produces rows no pattern explains.
    """
    p = case.args["dropout"]
    weights = expected_obs["internals/weights"]  # (B, H, T, T)
    values = expected_obs["internals/values"]  # (B, H, T, head_dim)
    batch, heads, tokens, head_dim = values.shape
    rtol, atol = tolerances(case.device)
    dropped = 0
    for pass_index in itertools.count():
        key = f"train_{pass_index}"
        if key not in expected_obs:
            break
        out = got_obs.get(key)
        if out is None or out.shape != (batch, tokens, heads * head_dim):
            return None  # the plain comparison reports the shape problem
        for b, h, t in itertools.product(range(batch), range(heads), range(tokens)):
            row = out[b, t, h * head_dim:(h + 1) * head_dim]
            pattern = _matching_pattern(row, weights[b, h, t, : t + 1], values[b, h, : t + 1], p, rtol, atol)
            if pattern is None:
                full = weights[b, h, t] @ values[b, h]
                elementwise = np.all(np.isclose(row, 0, atol=atol) | np.isclose(row, full / (1 - p), rtol=rtol, atol=atol))
                if elementwise:
                    return ("dropout is applied to the context vectors (or the output), not to the "
                            "attention weights: apply it to attn_weights right after the softmax")
                return ("in train mode your output is not what dropping attention weights gives: apply "
                        "dropout to the attention weights after the softmax (not to the scores, not to "
                        "the output) and scale is done by nn.Dropout itself")
            dropped += pattern.count(0)
    if dropped == 0:
        return ("in train mode with dropout={} no attention weight was ever dropped: is dropout "
                "applied (self.dropout(attn_weights)) and is the dropout rate passed on?".format(p))
    return None


def _matching_pattern(row, weights, values, p, rtol, atol):
    for pattern in itertools.product((1, 0), repeat=len(weights)):
        kept = np.array(pattern) * weights / (1 - p)
        if np.allclose(kept @ values, row, rtol=rtol, atol=atol):
            return pattern
    return None


# ------------------------------------------------------------------------------------------

def judge(task_id, case, got, expected, variants=()):
    """None when `got` matches `expected`; otherwise one message for the student.

    variants: (message, observations) pairs of known wrong implementations on the same case,
    or a function returning them (called only when something is wrong).
    """
    return judge_detail(task_id, case, got, expected, variants)[0]


def judge_detail(task_id, case, got, expected, variants=()):
    """(message or None, whether the problem is an exception the code raised)."""
    get_task(task_id)  # unknown ids fail loudly
    for key, want in expected.items():
        if key.startswith("internals/"):
            continue
        if key not in got and "error" in got:
            return describe_error(got["error"]), True
        if key.startswith("train_"):
            problem = dropout_problem(got, expected, case) if key == "train_0" else None
            if problem:
                return problem, False
            continue
        if key not in got:
            return f"{KEY_NAMES.get(key, key)}: could not be observed", False
        have = got[key]
        if not _close(have, want, case.device):
            return _explain(task_id, key, have, want, got, expected, case, variants), False
    if "error" in got and "error" not in expected:
        return describe_error(got["error"]), True
    return None, False


def _explain(task_id, key, have, want, got, expected, case, variants):
    name = KEY_NAMES.get(key, key if not key.startswith("grad/") else f"Gradient of {key[5:]}")
    if key == "structure":
        return _structure_difference(have, want)
    if key == "extra_parameters":
        return (f"your module has parameters the spec does not have: {', '.join(have)} "
                f"(with qkv_bias=False the query/key/value layers have no bias)")
    if key == "x_after":
        return ("your code changed its input tensor in place (for example with masked_fill_ on the "
                "argument): compute a new tensor instead, the caller's data must stay as it was")
    if key == "raises":
        return ("creating the module with d_out not divisible by num_heads should raise an error "
                "(e.g. ValueError or assert) instead of silently building a broken module")
    for message, variant_obs in (variants() if callable(variants) else variants):
        if key in variant_obs and _close(have, variant_obs[key], case.device):
            return f"{name}: wrong — it looks like {message}"
    hint = property_hint(task_id, key, got, expected, case)
    difference = _array_difference(name, have, want) if isinstance(want, np.ndarray) else (
        f"{name}: expected {want!r}, got {have!r}")
    return f"{difference} — {hint}" if hint else difference
