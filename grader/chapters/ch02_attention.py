"""The grader's chapter module of chapter 02 (attention and causal masking): its public and hidden
cases and its known mistakes."""
import functools

import numpy as np
import torch

from gptcourse.checking.chapters.ch02_attention import causal_attention_arguments, self_attention_arguments
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.attention import (MASKING, NAIVE_SOFTMAX, NEG_INF, SCALING, attend, dropout_internals,
                                     module_case, naive_softmax)
from grader.chapters.casekit import shape_label, subclass_with_forward

TOY_INPUTS = np.array(
    [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
     [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]],
    dtype=np.float64,
)


# ------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------

def _inputs_case(rng, shape, dtype="float32", inputs=None, scale=None):
    """simple_self_attention(inputs): inputs (T, d) or (B, T, d). scale: inputs that many times
    larger, so that scores pass the point where exp overflows (88 in float32, 709 in float64).
    Large cases are float64: in float32 the rounding of scores this large moves the gradients
    of two correct implementations apart by more than the tolerance."""
    x = inputs if inputs is not None else rng.normal(size=shape)
    label = shape_label(x.shape, dtype)
    if scale:
        x = x * scale
        label = f"inputs {scale:g} times larger (scores up to {np.max(x @ np.swapaxes(x, -1, -2)):.0f}): {label}"
    arrays = {"inputs": x, "grad_seed": rng.normal(size=x.shape)}
    return Case("2.1", "forward", label, {}, arrays, dtype)


def _scores_case(rng, shape, d_k, dtype="float32", offset=0.0):
    """causal_attention_weights(attn_scores, d_k): scores (..., T, T). A large offset gives scores
    past the point where exp overflows (88 in float32, 709 in float64) after the division by
    sqrt(d_k), all within a few units of each other: a correct softmax that zeroes the future and
    renormalises keeps numbers in every row."""
    scores = offset + 2.0 * rng.normal(size=shape)
    arrays = {"attn_scores": scores, "grad_seed": rng.normal(size=scores.shape)}
    size = f" (large: about {offset:g})" if offset else ""
    label = f"attention scores of shape {tuple(scores.shape)}{size}, d_k={d_k}, {dtype}"
    return Case("2.4", "forward", label, {"d_k": d_k}, arrays, dtype)


_v1 = functools.partial(module_case, "2.2", construct=self_attention_arguments, causal=False, batched=False)
_v2 = functools.partial(module_case, "2.3", construct=self_attention_arguments, causal=False, batched=False)
_causal = functools.partial(module_case, "2.5", construct=causal_attention_arguments)


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

def _mistaken_simple_attention(**options):
    def simple_self_attention(inputs):
        return attend(inputs, inputs, inputs, causal=False, **options)
    return simple_self_attention


def _simple_swapped(inputs):
    weights, context = attend(inputs, inputs, inputs, causal=False, scale="none")
    return context, weights


def _simple_normalised_by_sum(inputs):
    scores = inputs @ inputs.transpose(-2, -1)
    weights = scores / scores.sum(dim=-1, keepdim=True)
    return weights, weights @ inputs


def _simple_no_softmax(inputs):
    scores = inputs @ inputs.transpose(-2, -1)
    return scores, scores @ inputs


def _simple_context_from_scores(inputs):
    scores = inputs @ inputs.transpose(-2, -1)
    return torch.softmax(scores, dim=-1), scores @ inputs


def _simple_transposed_sum(inputs):
    weights, _ = attend(inputs, inputs, inputs, causal=False, scale="none")
    return weights, weights.transpose(-2, -1) @ inputs


def _causal_weights(attn_scores, d_k, mask="before", divisor=None, softmax_dim=-1, scale_after=False, naive=False):
    t = attn_scores.shape[-1]
    ones = torch.ones(t, t, dtype=torch.bool, device=attn_scores.device)
    scores = attn_scores
    if mask == "before":
        scores = scores.masked_fill(torch.triu(ones, 1), NEG_INF)
    elif mask == "zero":
        scores = scores.masked_fill(torch.triu(ones, 1), 0.0)
    elif mask == "diagonal":
        scores = scores.masked_fill(torch.triu(ones, 0), NEG_INF)
    elif mask == "past":
        scores = scores.masked_fill(torch.tril(ones, -1), NEG_INF)
    divisor = d_k ** 0.5 if divisor is None else divisor
    if scale_after:
        weights = torch.softmax(scores, dim=softmax_dim) / divisor
    elif naive:
        weights = naive_softmax(scores / divisor, dim=softmax_dim)
    else:
        weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if mask == "after":
        weights = weights.masked_fill(torch.triu(ones, 1), 0.0)
    return weights


def _weights_fn(**options):
    def causal_attention_weights(attn_scores, d_k):
        if options.get("divisor") == "dk":
            return _causal_weights(attn_scores, d_k, **{**options, "divisor": float(d_k)})
        if options.get("divisor") == "none":
            return _causal_weights(attn_scores, d_k, **{**options, "divisor": 1.0})
        return _causal_weights(attn_scores, d_k, **options)
    return causal_attention_weights


# Knobs that change which projections feed attend(); the others are attend()'s own.
PROJECTION_KNOBS = ("no_values", "query_for_keys", "key_for_values", "weight_not_transposed")


def _projections(self, x, weight_not_transposed=False):
    """Queries, keys and values of SelfAttention_v1 (parameters) or _v2 (nn.Linear layers)."""
    layers = (self.W_query, self.W_key, self.W_value)
    if isinstance(self.W_query, torch.nn.Parameter):
        return tuple(x @ w for w in layers)
    if weight_not_transposed:
        return tuple(x @ layer.weight for layer in layers)
    return tuple(layer(x) for layer in layers)


def _self_attention_forward(options):
    def forward(self, x):
        q, k, v = _projections(self, x, options.get("weight_not_transposed", False))
        if options.get("no_values"):
            v = x
        if options.get("query_for_keys"):
            k = q
        if options.get("key_for_values"):
            v = k
        attend_options = {key: val for key, val in options.items() if key not in PROJECTION_KNOBS}
        return attend(q, k, v, causal=False, d_in=x.shape[-1], **attend_options)[1]
    return forward


def causal_forward(options):
    """CausalAttention.forward with attend()'s knobs: also used by chapter 03's grader's chapter module."""
    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return attend(q, k, v, causal=True, dropout=self.dropout, d_in=x.shape[-1], **options)[1]
    return forward


def _mistakes_2_1():
    return [
        ("you return (context_vecs, attn_weights): the order is (attn_weights, context_vecs)", _simple_swapped),
        ("the scores are used without a softmax", _simple_no_softmax),
        ("the scores are divided by their sum instead of going through a softmax", _simple_normalised_by_sum),
        ("the attention weights are transposed in the weighted sum (use attn_weights @ inputs)", _simple_transposed_sum),
        ("the context vectors are a sum weighted by the raw scores: weight it with the attention weights, the "
         "softmax of the scores, attn_weights @ inputs", _simple_context_from_scores),
        ("the softmax is taken over the wrong dimension: use the last one (dim=-1)", _mistaken_simple_attention(scale="none", softmax_dim=-2)),
        ("the softmax is taken over dim=0, which for a batch is the batch dimension: use dim=-1", _mistaken_simple_attention(scale="none", softmax_dim=0)),
        ("the scores are scaled: simple self-attention uses the raw dot products", _mistaken_simple_attention(scale="sqrt_dk")),
        (NAIVE_SOFTMAX, _mistaken_simple_attention(scale="none", naive=True)),
    ]


# keys.shape[0] is the number of tokens of one (T, d) sequence, and the batch size of a batch.
SCALED_BY_SHAPE_0 = (dict(scale="sqrt_shape0"), "the scores are divided by sqrt(keys.shape[0]), the number of "
                                                 "tokens (the batch size for a batch), instead of sqrt(d_out), "
                                                 "the width of the keys: keys.shape[-1]")


def _mistakes_2_2():
    extra = [
        SCALED_BY_SHAPE_0,
        (dict(no_values=True), "the value projection is missing: the weights multiply the inputs instead of x @ W_value"),
        (dict(query_for_keys=True), "the keys are computed with W_query instead of W_key"),
        (dict(key_for_values=True), "the values are computed with W_key instead of W_value"),
    ]
    return [(m, subclass_with_forward("2.2", _self_attention_forward(o))) for o, m in SCALING + extra]


def _mistakes_2_3():
    extra = [
        SCALED_BY_SHAPE_0,
        (dict(no_values=True), "the value projection is missing: the weights multiply the inputs instead of W_value(x)"),
        (dict(key_for_values=True), "the values are computed with W_key instead of W_value"),
        (dict(weight_not_transposed=True), "the nn.Linear weights are used as x @ W.weight: call the layer (W_query(x)), "
                                           "its weight is stored as (d_out, d_in)"),
    ]
    return [(m, subclass_with_forward("2.3", _self_attention_forward(o))) for o, m in SCALING + extra]


def _mistakes_2_4():
    return [
        ("the future scores are set to 0 instead of -inf before the softmax", _weights_fn(mask="zero")),
        ("the mask is applied after the softmax without renormalising, so the rows do not sum to 1", _weights_fn(mask="after")),
        ("no causal mask is applied", _weights_fn(mask="none")),
        ("the mask also hides the diagonal (use triu with diagonal=1)", _weights_fn(mask="diagonal")),
        ("the mask hides the past instead of the future (tril instead of triu)", _weights_fn(mask="past")),
        ("the scores are not divided by sqrt(d_k)", _weights_fn(divisor="none")),
        ("the scores are divided by d_k instead of sqrt(d_k)", _weights_fn(divisor="dk")),
        ("the scores are scaled after the softmax instead of before it", _weights_fn(scale_after=True)),
        ("the softmax is taken over the wrong dimension (use dim=-1)", _weights_fn(softmax_dim=-2)),
        (NAIVE_SOFTMAX, _weights_fn(naive=True)),
    ]


def _mistakes_2_5():
    return [(m, subclass_with_forward("2.5", causal_forward(o))) for o, m in MASKING + SCALING]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "2.1": GraderSpec(
        public=lambda rng: [
            _inputs_case(rng, None, inputs=TOY_INPUTS.copy()),
            _inputs_case(rng, (2, 5, 3)),
            _inputs_case(rng, None, dtype="float64", inputs=TOY_INPUTS.copy(), scale=30.0),
        ],
        hidden=lambda rng: [
            _inputs_case(rng, (5, 4)),
            _inputs_case(rng, (1, 4, 6), dtype="float64"),
            _inputs_case(rng, (3, 7, 2)),
            _inputs_case(rng, (2, 4, 3), dtype="float64", scale=25.0),
            _inputs_case(rng, (3, 5), dtype="float64", scale=25.0),
        ],
        mistakes=_mistakes_2_1),
    "2.2": GraderSpec(
        public=lambda rng: [
            _v1(rng, tokens=6, d_in=3, d_out=2),
            _v1(rng, tokens=5, d_in=4, d_out=3),
        ],
        hidden=lambda rng: [
            _v1(rng, tokens=7, d_in=2, d_out=5),
            _v1(rng, tokens=4, d_in=6, d_out=3, dtype="float64"),
            _v1(rng, tokens=1, d_in=3, d_out=2),
        ],
        mistakes=_mistakes_2_2),
    "2.3": GraderSpec(
        public=lambda rng: [
            _v2(rng, tokens=6, d_in=3, d_out=2),
            _v2(rng, tokens=5, d_in=4, d_out=3, qkv_bias=True),
        ],
        hidden=lambda rng: [
            _v2(rng, tokens=7, d_in=2, d_out=5),
            _v2(rng, tokens=4, d_in=6, d_out=3, qkv_bias=True, dtype="float64"),
            _v2(rng, tokens=3, d_in=4, d_out=4, qkv_bias=True),
            _v2(rng, tokens=5, d_in=4, d_out=3, qkv_bias=True, dtype="float64", large_scores=25.0),
        ],
        mistakes=_mistakes_2_3),
    "2.4": GraderSpec(
        public=lambda rng: [
            _scores_case(rng, (6, 6), d_k=2),
            _scores_case(rng, (2, 5, 5), d_k=3),
            _scores_case(rng, (5, 5), d_k=4, offset=300.0),
        ],
        hidden=lambda rng: [
            _scores_case(rng, (2, 3, 4, 4), d_k=4, dtype="float64"),
            _scores_case(rng, (1, 7, 7), d_k=8),
            _scores_case(rng, (1, 1), d_k=5),
            _scores_case(rng, (2, 6, 6), d_k=2, offset=200.0),
            _scores_case(rng, (3, 4, 4), d_k=3, dtype="float64", offset=1500.0),
        ],
        mistakes=_mistakes_2_4),
    "2.5": GraderSpec(
        public=lambda rng: [
            _causal(rng, batch=2, tokens=6, d_in=3, d_out=2),
            _causal(rng, batch=1, tokens=4, d_in=5, d_out=3, context_length=7, qkv_bias=True),
            _causal(rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=3, dropout=0.5),
        ],
        hidden=lambda rng: [
            _causal(rng, batch=3, tokens=5, d_in=4, d_out=6, context_length=9, qkv_bias=True),
            _causal(rng, batch=2, tokens=7, d_in=6, d_out=4, dropout=0.3, dtype="float64"),
            _causal(rng, batch=1, tokens=1, d_in=3, d_out=2, context_length=4),
            _causal(rng, batch=2, tokens=5, d_in=4, d_out=3, qkv_bias=True, dtype="float64", large_scores=25.0),
            _causal(rng, kind="dropout", batch=3, tokens=4, d_in=3, d_out=5, context_length=8, dropout=0.5),
        ],
        mistakes=_mistakes_2_5,
        extras=functools.partial(dropout_internals, heads="single")),
}
