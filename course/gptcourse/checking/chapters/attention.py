"""What the attention chapters (02, 03, and later the KV cache of 06) share: the probes of a
causal attention module, the constructor arguments of a multi-head one (03 and 06), how a
causal mask buffer is described, how dropout on attention weights is judged, and the hints
about attention weights."""
import functools
import itertools

import numpy as np
import torch

from gptcourse.checking import kinds
from gptcourse.checking.judge import tolerances
from gptcourse.checking.probes import describe_attribute

QKV = ("W_query", "W_key", "W_value")
NO_BIAS = "with qkv_bias=False the query/key/value layers have no bias"

KEY_NAMES = {
    "weights": "Attention weights",
    "context": "Context vectors",
}

# Size mismatches mean different things with and without a mask buffer.
SIZE_MISMATCH = r"must match the size of tensor|The size of tensor a"
# A size mismatch is blamed on the mask only when the student's line that raised uses it: the
# same error from a product of queries and keys says nothing about the mask.
ON_A_MASK_LINE = {"where": r"mask"}
MASK_TRUNCATION_HINT = ("a size mismatch: is the mask truncated to the number of tokens "
                        "(mask[:num_tokens, :num_tokens]) and are you transposing the right dimensions?")
BATCHED_INPUT_HINT = ("sizes do not match on batched input: with (batch, tokens, dim) the two dimensions to "
                      "swap are the last two, .transpose(-2, -1) (.T and .transpose(0, 1) move the batch "
                      "dimension too), and the number of tokens is shape[-1] (or shape[-2]), not shape[0]")
BOOL_MASK = r"only supports boolean masks|expected BoolTensor|mask.*bool"
BOOL_MASK_BUFFER_HINT = "masked_fill needs a boolean mask: use self.mask.bool()[:num_tokens, :num_tokens]"
BOOL_MASK_HINT = "masked_fill needs a boolean mask: build it with dtype=torch.bool or call .bool() on it"


def multi_head_arguments(args):
    """(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False): MultiHeadAttentionWrapper
    and MultiHeadAttention (3.1, 3.2), and the cached multi-head attention of 6.5."""
    positional = [args["d_in"], args["d_out"], args["context_length"], args["dropout"], args["num_heads"]]
    return positional, ({"qkv_bias": True} if args.get("qkv_bias") else {})


def causal_module_probes(construct, attributes, raises_message=None):
    """The probes of a causal attention module: forward (eval), dropout (train), and
    optionally a constructor that must refuse its arguments."""
    probes = {
        "forward": kinds.ModuleForward(
            construct, attributes, describe={"mask": describe_mask},
            same_in_train_mode=lambda args: args.get("dropout") == 0.0, extra_parameters_hint=NO_BIAS),
        "dropout": kinds.ModuleDropout(construct, dropout_problem),
    }
    if raises_message:
        probes["raises"] = kinds.RaisesOnConstruct(construct, raises_message)
    return probes


def describe_mask(module, case):
    """The `mask` attribute: a registered buffer holding the causal pattern of context_length.

    Leading singleton dimensions, float or bool are all fine, and so is either way of writing
    the pattern: ones above the diagonal (the positions to hide, as in the book) or ones on
    and below it (the positions to keep, used with masked_fill(mask == 0, ...)). Both give
    the same attention; which one the code uses is judged by its outputs.
    """
    if "mask" not in dict(module.named_buffers(recurse=False)):
        return describe_attribute(module, "mask")
    context_length = case.args["context_length"]
    mask = module.mask.detach().cpu()
    while mask.dim() > 2 and mask.shape[0] == 1:
        mask = mask[0]
    if tuple(mask.shape) != (context_length, context_length):
        return (f"registered buffer of shape {tuple(module.mask.shape)} (expected "
                f"({context_length}, {context_length}) for context_length={context_length})")
    future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
    if torch.equal(mask.bool(), future) or torch.equal(mask.bool(), ~future):
        return "registered buffer with the causal pattern"
    return ("registered buffer without the causal pattern (ones above the diagonal: "
            "torch.triu(torch.ones(context_length, context_length), diagonal=1))")


# ------------------------------------------------------------------------------------------
# Hints about attention weights
# ------------------------------------------------------------------------------------------

OVERFLOW_HINT = ("a softmax written by hand as exp(scores) / sum overflows once a score passes about 88 in "
                 "float32 (709 in float64): exp gives inf, and inf / inf is NaN. Use torch.softmax, "
                 "which subtracts each row's maximum before exp, or subtract it yourself")


def _nan_where_numbers(key, got, expected):
    value, want = got.get(key), expected.get(key)
    if not isinstance(value, np.ndarray) or not isinstance(want, np.ndarray) or value.dtype.kind != "f":
        return False
    return bool(np.isnan(value).any() and not np.isnan(want).any())


def scores_can_overflow(case):
    """Whether a score of this case can pass the point where exp overflows (88 in float32): shown by
    its arrays (the scores, or inputs whose dot products are the scores), or by a module case whose
    query and key biases were set large for that purpose."""
    arrays = case.arrays
    if "attn_scores" in arrays:
        return float(np.abs(arrays["attn_scores"]).max()) / np.sqrt(case.args.get("d_k", 1)) > 80
    if "inputs" in arrays:
        x = arrays["inputs"]
        return float(np.abs(x @ np.swapaxes(x, -1, -2)).max()) > 80
    return "large scores" in case.label


def _nan_rows(value):
    """For each query position (the second-to-last axis), whether any of its rows holds NaN."""
    rows = np.isnan(value).any(axis=-1)
    return rows.reshape(-1, rows.shape[-1]).any(axis=0) if rows.ndim > 1 else rows


def _all_nan_rows(value):
    """For each query position, whether some row of it is NaN in every entry."""
    rows = np.isnan(value).all(axis=-1)
    return rows.reshape(-1, rows.shape[-1]).any(axis=0) if rows.ndim > 1 else rows


def overflow_hint(key, got, expected, case):
    """NaN where numbers are expected, without a mask: an overflowing hand-written softmax, claimed
    only when this case's scores are large enough to overflow."""
    if not _nan_where_numbers(key, got, expected):
        return ""
    if scores_can_overflow(case):
        return "NaN where numbers are expected: scores here pass 88, and " + OVERFLOW_HINT
    return ("NaN where numbers are expected, though this case's scores are small (no exp overflows): a NaN "
            "came from an operation such as 0 * inf, inf - inf or 0 / 0 in your code")


def nan_hint(key, got, expected, case):
    """NaN where numbers are expected, with a causal mask. What the rows show decides what is said:
    only the first position's row (it sees itself alone): the diagonal is hidden; rows at every
    position: a NaN entered the scores (0 * -inf from a mask multiplied by -inf), or exp
    overflowed where the case's scores are large enough for that."""
    if not _nan_where_numbers(key, got, expected):
        return ""
    value = got[key]
    if value.ndim < 2:
        return overflow_hint(key, got, expected, case)
    rows = _nan_rows(value)
    empty = _all_nan_rows(value)
    if empty.any() and not rows.all() and not scores_can_overflow(case):
        positions = [int(i) for i in np.flatnonzero(empty)]
        return (f"NaN throughout the rows of positions {positions[:6]}: at those positions every score was hidden "
                f"(-inf), and a softmax over nothing is NaN. Each token must see itself and the tokens before it: "
                f"mark the future with torch.triu(..., diagonal=1), or what may be seen with torch.tril(...) and "
                f"fill where it is 0")
    if rows[0] and not rows[1:].any():
        return ("NaN only in the first position's row: the first token may see itself alone, so a mask that "
                "hides the diagonal too leaves it nothing, and a softmax over nothing is NaN. Mark the future "
                "with torch.triu(..., diagonal=1), or what may be seen with torch.tril(...) and fill where it is 0")
    if rows.all() and scores_can_overflow(case):
        return "NaN where numbers are expected, and this case's scores pass 88: " + OVERFLOW_HINT
    if rows.all():
        return ("NaN at every position, the first token's row too (it sees itself, so its row is never empty), "
                "and this case's scores are small: a NaN entered the scores before the softmax. 0 * -inf is NaN: "
                "a 0/1 mask multiplied by -inf (or added after such a product) gives it; put -inf in with "
                "masked_fill (or torch.where) instead")
    positions = [int(i) for i in np.flatnonzero(rows)]
    return (f"NaN in the rows of positions {positions[:6]}{' ...' if len(positions) > 6 else ''}, not in the others: "
            f"compare what your code does for those positions with the rest")


def weights_hint(key, got, expected, case):
    """Rows of attention weights that do not sum to 1 (NaN rows are nan_hint's)."""
    value = got.get(key)
    if key != "weights" or not isinstance(value, np.ndarray) or value.shape != np.shape(expected.get(key)):
        return ""
    if np.isnan(value).any():
        return ""
    if not np.allclose(value.sum(axis=-1), 1.0, atol=1e-4):
        return ("each row of the attention weights should sum to 1: take the softmax over the last "
                "dimension (dim=-1)")
    return ""


def future_weights_hint(key, got, expected, case):
    value = got.get(key)
    if key != "weights" or not isinstance(value, np.ndarray) or value.shape != np.shape(expected.get(key)):
        return ""
    t = value.shape[-1]
    rows, cols = np.triu_indices(t, k=1)
    if np.any(value[..., rows, cols] != 0):
        return ("weights above the diagonal must be exactly 0: set the future scores to -inf "
                "before the softmax")
    return ""


# ------------------------------------------------------------------------------------------
# Dropout on attention weights
# ------------------------------------------------------------------------------------------

def dropout_problem(got, expected, case):
    """Check the train-mode outputs against every way of dropping attention weights.

    With attention weights A (eval mode) and values V, dropout on the weights makes row t of
    a head's output sum_j m_j * A[t, j] * V[j] / (1 - p) for some 0/1 pattern m. We try all
    patterns (rows are short), so any random-number usage is accepted; dropout applied
    anywhere else (scores, context vectors, output) produces rows no pattern explains.
    The grader's side puts A and V of every head in expected["internals/weights"|"values"].
    """
    tokens = expected["internals/values"].shape[2]
    passes = []
    for pass_index in itertools.count():
        key = f"train_{pass_index}"
        if key not in expected:
            break
        passes.append((got.get(key), range(tokens)))
    return dropped_weights_problem(passes, expected, case)


def dropped_weights_problem(outputs, expected, case):
    """dropout_problem for outputs of some positions each: [(output, positions)], an output of
    shape (batch, len(positions), heads * head_dim) holding those positions' rows (a chunk fed
    to a cache holds the positions start .. end - 1). None when every row is explained and some
    weight was dropped; None too for an output of the wrong shape (the plain comparison says so)."""
    rate = case.args["dropout"]
    weights = expected["internals/weights"]  # (B, H, T, T)
    values = expected["internals/values"]  # (B, H, T, head_dim)
    batch, heads, _, head_dim = values.shape
    rtol, atol = tolerances(case.device)
    dropped = 0
    for out, positions in outputs:
        if out is None or out.shape != (batch, len(positions), heads * head_dim):
            return None
        for b, h, (i, t) in itertools.product(range(batch), range(heads), enumerate(positions)):
            row = out[b, i, h * head_dim:(h + 1) * head_dim]
            pattern = _matching_pattern(row, weights[b, h, t, : t + 1], values[b, h, : t + 1], rate, rtol, atol)
            if pattern is None:
                full = weights[b, h, t] @ values[b, h]
                if np.allclose(row, full, rtol=rtol, atol=atol):  # the eval-mode row, nothing dropped or scaled
                    return (f"in train mode with dropout={rate} the output is the eval-mode output: no attention "
                            f"weight was dropped. Apply dropout to the attention weights after the softmax "
                            f"(self.dropout(attn_weights)) on every path through forward, with the rate passed on")
                elementwise = np.all(np.isclose(row, 0, atol=atol) | np.isclose(row, full / (1 - rate), rtol=rtol, atol=atol))
                if elementwise:
                    return ("dropout is applied to the context vectors (or the output), not to the "
                            "attention weights: apply it to attn_weights right after the softmax")
                return ("in train mode your output is not what dropping attention weights gives: apply "
                        "dropout to the attention weights after the softmax (not to the scores, not to "
                        "the output) and scale is done by nn.Dropout itself")
            dropped += pattern.count(0)
    if dropped == 0:
        return ("in train mode with dropout={} no attention weight was ever dropped: is dropout "
                "applied (self.dropout(attn_weights)) and is the dropout rate passed on?".format(rate))
    return None


def _matching_pattern(row, weights, values, rate, rtol, atol):
    """The first 0/1 pattern (in itertools.product((1, 0), ...) order) whose kept weights give
    `row`, or None. All patterns are tried at once: one matrix product instead of a loop."""
    patterns = _patterns(len(weights))
    candidates = (patterns * (weights / (1 - rate))) @ values  # (2**n, head_dim)
    # np.allclose(candidate, row) for every candidate: |candidate - row| <= atol + rtol * |row|
    matches = np.all(np.abs(candidates - row) <= atol + rtol * np.abs(row), axis=-1)
    if not matches.any():
        return None
    return tuple(int(k) for k in patterns[int(np.argmax(matches))])


@functools.lru_cache(maxsize=None)
def _patterns(n):
    return np.array(list(itertools.product((1, 0), repeat=n)), dtype=np.float64)
