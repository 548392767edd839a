"""What the grader's chapter modules of the attention chapters (02, 03) share: one attention
routine with a knob per classic mistake, the messages of those mistakes, attention-module
cases, and the eval-mode attention weights the dropout judge needs."""
import numpy as np
import torch

from gptcourse.checking.records import Case
from grader.chapters.casekit import add_x_future, module_arrays, reference_module, shape_label

NEG_INF = float("-inf")


def naive_softmax(scores, dim=-1):
    """exp / sum without subtracting the row's maximum: right for small scores, but exp overflows
    to inf past about 88 in float32 (709 in float64), and inf / inf is NaN."""
    exps = torch.exp(scores)
    return exps / exps.sum(dim=dim, keepdim=True)


def attend(q, k, v, *, causal, dropout=None, scale="sqrt_dk", d_in=None, d_out=None, softmax_dim=-1,
           mask="before", transpose_scores=False, scale_after=False, no_softmax=False, naive=False):
    """Scaled dot-product attention with one knob per classic mistake. Returns (weights, context).
    With fewer queries than keys (a chunk after cached tokens), the queries are the last tokens."""
    scores = k @ q.transpose(-2, -1) if transpose_scores else q @ k.transpose(-2, -1)
    rows, columns = scores.shape[-2:]
    cached = columns - rows  # tokens before the first query: 0 without a cache
    ones = torch.ones(rows, columns, dtype=torch.bool, device=scores.device)
    future = torch.triu(ones, diagonal=1 + cached)
    if causal and mask == "before":
        scores = scores.masked_fill(future, NEG_INF)
    elif causal and mask == "zero":
        scores = scores.masked_fill(future, 0.0)
    elif causal and mask == "diagonal":
        scores = scores.masked_fill(torch.triu(ones, diagonal=cached), NEG_INF)
    elif causal and mask == "past":
        scores = scores.masked_fill(torch.tril(ones, diagonal=cached - 1), NEG_INF)
    divisor = {"sqrt_dk": k.shape[-1] ** 0.5, "none": 1.0, "sqrt_din": (d_in or 1) ** 0.5,
               "sqrt_dout": (d_out or 1) ** 0.5, "dk": float(k.shape[-1]), "sqrt_shape0": k.shape[0] ** 0.5}[scale]
    if no_softmax:
        weights = scores / divisor
    elif scale_after:
        weights = torch.softmax(scores, dim=softmax_dim) / divisor
    elif naive:
        weights = naive_softmax(scores / divisor, dim=softmax_dim)
    else:
        weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if causal and mask == "after":
        weights = weights.masked_fill(future, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights, weights @ v


# Messages complete the sentence "... is wrong — it looks like ...".
NAIVE_SOFTMAX = ("the softmax is written by hand as exp(scores) / sum without subtracting each row's maximum: "
                 "for large scores exp overflows to inf and inf / inf is NaN; use torch.softmax, "
                 "which is stable, or subtract the row's maximum before exp")
SCALING = [
    (dict(scale="none"), "the scores are not divided by sqrt(d_k) (the width of the keys) before the softmax"),
    (dict(scale="sqrt_din"), "the scores are divided by sqrt(d_in) instead of sqrt(d_out), the width of the keys"),
    (dict(scale="dk"), "the scores are divided by d_k instead of sqrt(d_k)"),
    (dict(scale_after=True), "the scores are scaled after the softmax instead of before it: scale "
                             "the scores, then take the softmax"),
    (dict(no_softmax=True), "the scaled scores are used as weights without a softmax, so rows do not sum to 1"),
    (dict(softmax_dim=-2), "the softmax is taken over the wrong dimension: use the last one (dim=-1), "
                           "so that each query's weights sum to 1"),
    (dict(transpose_scores=True), "the scores are keys @ queries.T instead of queries @ keys.T "
                                  "(the score matrix is transposed)"),
    (dict(naive=True), NAIVE_SOFTMAX),
]
MASKING = [
    (dict(mask="none"), "no causal mask is applied (note: masked_fill returns a new tensor — "
                        "its result must be assigned, or use masked_fill_ on your own scores)"),
    (dict(mask="zero"), "future scores are set to 0 instead of -inf before the softmax, so they "
                        "still get weight (exp(0) = 1)"),
    (dict(mask="after"), "the mask is applied after the softmax without renormalising, so the rows "
                         "no longer sum to 1; mask the scores with -inf before the softmax"),
    (dict(mask="diagonal"), "the mask also hides the diagonal (triu with diagonal=0): a token must "
                            "see itself; use diagonal=1"),
    (dict(mask="past"), "the mask hides the past instead of the future (tril instead of triu)"),
]


# ------------------------------------------------------------------------------------------
# Cases of attention modules
# ------------------------------------------------------------------------------------------

def _multi_head_forward(split_without_transpose=False, merge_without_transpose=False, use_out_proj=True,
                        cache=False, **options):
    """MultiHeadAttention's forward with one classic mistake switched on (or attend's options).
    With cache=True, the forward of Task 6.5's module, its cache kept right: the chapter 03
    mistake a student carries into the class they extend with a cache."""
    def forward(self, x, use_cache=False):
        b, t, _ = x.shape
        h, hd = self.num_heads, self.head_dim

        def split(y):
            if split_without_transpose:
                return y.reshape(b, h, t, hd)
            return y.view(b, t, h, hd).transpose(1, 2)

        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        if cache and use_cache:
            k, v = _with_the_cache(self, k, v)
        _, context = attend(q, k, v, causal=True, dropout=self.dropout, d_in=x.shape[-1], d_out=self.d_out,
                            **options)
        if merge_without_transpose:
            context = context.reshape(b, t, self.d_out)
        else:
            context = context.transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(context) if use_out_proj else context
    return forward


def _with_the_cache(module, keys, values):
    """Task 6.5's cache done right: the cached keys and values joined to the new ones, stored,
    and returned; past context_length, a ValueError."""
    cached = 0 if module.cache_k is None else module.cache_k.shape[2]
    if cached + keys.shape[2] > module.context_length:
        raise ValueError("past context_length")
    if cached:
        keys, values = torch.cat((module.cache_k, keys), dim=2), torch.cat((module.cache_v, values), dim=2)
    module.cache_k, module.cache_v = keys, values
    return keys, values


def multi_head_mistakes(cache=False):
    """MultiHeadAttention's classic mistakes, as (message, forward) pairs, in the order they are
    tried: chapter 03 grades them in Task 3.2, and chapter 06 again (cache=True) in the attention
    of Task 6.5, which a student builds by adding a cache to their chapter 03 class."""
    return [(message, _multi_head_forward(cache=cache, **options)) for message, options in [
        ("the heads are split with view(b, num_heads, num_tokens, head_dim) directly: view as "
         "(b, num_tokens, num_heads, head_dim) first, then transpose(1, 2)", dict(split_without_transpose=True)),
        ("the heads are merged without transposing back: transpose(1, 2) before the view to "
         "(b, num_tokens, d_out)", dict(merge_without_transpose=True)),
        ("out_proj is never applied to the combined heads", dict(use_out_proj=False)),
        ("the scores are divided by sqrt(d_out) instead of sqrt(head_dim)", dict(scale="sqrt_dout")),
    ] + [(message, options) for options, message in MASKING + SCALING[:1] + SCALING[4:]]]


def module_case(task_id, rng, construct, kind="forward", batch=2, tokens=6, dtype="float32", *,
                causal=True, batched=True, out_width=None, identity_out_proj=False, large_scores=None, **args):
    """One case of an attention module: weights for the reference's parameters, an input,
    a gradient seed and, for causal modules, an input whose later tokens differ.

    construct: the task's constructor arguments (its public chapter module's function).
    out_width(args): the width of the output (default d_out). identity_out_proj: in dropout
    cases, make out_proj the identity so the output is the heads' context vectors and the
    judge can check the dropout pattern head by head. large_scores: every query and key bias set
    to this value (qkv_bias=True), so that all scores are large, past 709 where exp overflows
    even in float64 (a softmax written by hand without subtracting the row's maximum gives NaN),
    while each row's scores stay within a few dozen of each other: a correct softmax that zeroes
    the future and renormalises keeps numbers in every row.
    """
    args.setdefault("qkv_bias", False)
    if causal:
        args.setdefault("context_length", tokens)
        args.setdefault("dropout", 0.0)
    if kind == "raises":
        label = f"d_out={args['d_out']} with num_heads={args['num_heads']} (not divisible)"
        return Case(task_id, kind, label, args, {}, dtype)
    x_shape = (batch, tokens, args["d_in"]) if batched else (tokens, args["d_in"])
    width = out_width(args) if out_width else args["d_out"]
    overrides = {}
    if identity_out_proj and kind == "dropout":
        overrides = {"state/out_proj.weight": np.eye(args["d_out"]), "state/out_proj.bias": np.zeros(args["d_out"])}
    module = reference_module(task_id, construct, args)
    arrays = module_arrays(module, rng, x_shape, x_shape[:-1] + (width,), overrides)
    if large_scores:
        for name in arrays:
            if name.endswith(("W_query.bias", "W_key.bias")):
                arrays[name] = np.full_like(arrays[name], large_scores)
    if causal and kind == "forward":
        add_x_future(arrays, args, rng)
    order = ("d_in", "d_out", "num_heads", "context_length", "dropout", "qkv_bias")
    shown = {k: args[k] for k in sorted(args, key=lambda k: order.index(k) if k in order else len(order))
             if k != "causal_t" and not (k == "qkv_bias" and not args[k])}
    prefix = "train mode with dropout: " if kind == "dropout" else ""
    prefix += f"large scores (query and key biases of {large_scores:g}): " if large_scores else ""
    return Case(task_id, kind, prefix + shape_label(x_shape, dtype, **shown), args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# What the dropout judge needs: every head's eval-mode attention weights and values,
# computed from the case's weights (gptcourse.checking.chapters.attention.dropout_problem).
# ------------------------------------------------------------------------------------------

def dropout_internals(case, heads):
    """heads: "single" (one head, W_query...), "wrapper" (heads.<h>.W_query...) or "split"
    (one W_query split into num_heads heads)."""
    if case.kind != "dropout":
        return {}
    return attention_internals(case, heads)


def attention_internals(case, heads):
    """Every head's eval-mode attention weights and values on the case's input x (see
    dropout_internals for `heads`), whatever the kind of case."""
    a = case.arrays
    x = torch.tensor(a["x"], dtype=torch.float64)
    if heads == "single":
        per_head = [_head_internals(x, a, "")]
    elif heads == "wrapper":
        per_head = [_head_internals(x, a, f"heads.{h}.") for h in range(case.args["num_heads"])]
    else:
        per_head = _split_head_internals(x, a, case.args["num_heads"])
    weights = torch.stack([w for w, _ in per_head], dim=1)
    values = torch.stack([v for _, v in per_head], dim=1)
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
