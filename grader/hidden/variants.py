"""Known wrong variants of each task: the mistakes students make, as code.

The judge runs them on the same cases as the reference; when a student's observations match
a variant's, the feedback names the mistake. Each variant is a small change to one shared
attention routine (or to the reference class), so each one differs from the reference in
exactly one way.
"""
import torch

from grader.reference import reference_object

NEG_INF = float("-inf")


def attend(q, k, v, *, causal, dropout=None, scale="sqrt_dk", d_in=None, softmax_dim=-1,
           mask="before", transpose_scores=False, scale_after=False, no_softmax=False):
    """Scaled dot-product attention with one knob per classic mistake. Returns (weights, context)."""
    scores = k @ q.transpose(-2, -1) if transpose_scores else q @ k.transpose(-2, -1)
    t = scores.shape[-1]
    ones = torch.ones(t, t, dtype=torch.bool, device=scores.device)
    future = torch.triu(ones, diagonal=1)
    if causal and mask == "before":
        scores = scores.masked_fill(future, NEG_INF)
    elif causal and mask == "zero":
        scores = scores.masked_fill(future, 0.0)
    elif causal and mask == "diagonal":
        scores = scores.masked_fill(torch.triu(ones, diagonal=0), NEG_INF)
    elif causal and mask == "past":
        scores = scores.masked_fill(torch.tril(ones, diagonal=-1), NEG_INF)
    divisor = {"sqrt_dk": k.shape[-1] ** 0.5, "none": 1.0, "sqrt_din": (d_in or 1) ** 0.5,
               "dk": float(k.shape[-1])}[scale]
    if no_softmax:
        weights = scores / divisor
    elif scale_after:
        weights = torch.softmax(scores, dim=softmax_dim) / divisor
    else:
        weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if causal and mask == "after":
        weights = weights.masked_fill(future, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights, weights @ v


# Messages complete the sentence "... is wrong — it looks like ...".
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
# Functions
# ------------------------------------------------------------------------------------------

def _simple_variant(**options):
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


def _simple_transposed_sum(inputs):
    weights, _ = attend(inputs, inputs, inputs, causal=False, scale="none")
    return weights, weights.transpose(-2, -1) @ inputs


def _causal_weights(attn_scores, d_k, mask="before", divisor=None, softmax_dim=-1, scale_after=False):
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


# ------------------------------------------------------------------------------------------
# Modules: subclasses of the reference with one thing changed in forward
# ------------------------------------------------------------------------------------------

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


def _causal_forward(options):
    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return attend(q, k, v, causal=True, dropout=self.dropout, d_in=x.shape[-1], **options)[1]
    return forward


def _wrapper_forward(combine):
    def forward(self, x):
        return combine([head(x) for head in self.heads])
    return forward


def _mha_forward(split_without_transpose=False, merge_without_transpose=False, use_out_proj=True, **options):
    def forward(self, x):
        b, t, _ = x.shape
        h, hd = self.num_heads, self.head_dim

        def split(y):
            if split_without_transpose:
                return y.reshape(b, h, t, hd)
            return y.view(b, t, h, hd).transpose(1, 2)

        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        _, context = attend(q, k, v, causal=True, dropout=self.dropout, d_in=x.shape[-1], **options)
        if merge_without_transpose:
            context = context.reshape(b, t, self.d_out)
        else:
            context = context.transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(context) if use_out_proj else context
    return forward


def _mha_scale_by_dout():
    def forward(self, x):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = (q @ k.transpose(-2, -1)).masked_fill(
            torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1), NEG_INF)
        weights = self.dropout(torch.softmax(scores / self.d_out ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, t, self.d_out))
    return forward


def _subclass(task_id, forward):
    base = reference_object(task_id)
    return type(base.__name__, (base,), {"forward": forward})


def variants(task_id):
    """[(message, object)] of the task's known wrong variants, most specific first."""
    if task_id == "2.1":
        return [
            ("you return (context_vecs, attn_weights): the order is (attn_weights, context_vecs)", _simple_swapped),
            ("the scores are used without a softmax", _simple_no_softmax),
            ("the scores are divided by their sum instead of going through a softmax", _simple_normalised_by_sum),
            ("the attention weights are transposed in the weighted sum (use attn_weights @ inputs)", _simple_transposed_sum),
            ("the softmax is taken over the wrong dimension: use the last one (dim=-1)", _simple_variant(scale="none", softmax_dim=-2)),
            ("the softmax is taken over dim=0, which for a batch is the batch dimension: use dim=-1", _simple_variant(scale="none", softmax_dim=0)),
            ("the scores are scaled: simple self-attention uses the raw dot products", _simple_variant(scale="sqrt_dk")),
        ]
    if task_id == "2.4":
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
        ]
    if task_id == "2.2":
        extra = [
            (dict(no_values=True), "the value projection is missing: the weights multiply the inputs instead of x @ W_value"),
            (dict(query_for_keys=True), "the keys are computed with W_query instead of W_key"),
            (dict(key_for_values=True), "the values are computed with W_key instead of W_value"),
        ]
        return [(m, _subclass("2.2", _self_attention_forward(o))) for o, m in SCALING + extra]
    if task_id == "2.3":
        extra = [
            (dict(no_values=True), "the value projection is missing: the weights multiply the inputs instead of W_value(x)"),
            (dict(key_for_values=True), "the values are computed with W_key instead of W_value"),
            (dict(weight_not_transposed=True), "the nn.Linear weights are used as x @ W.weight: call the layer (W_query(x)), "
                                               "its weight is stored as (d_out, d_in)"),
        ]
        return [(m, _subclass("2.3", _self_attention_forward(o))) for o, m in SCALING + extra]
    if task_id == "2.5":
        return [(m, _subclass("2.5", _causal_forward(o))) for o, m in MASKING + SCALING]
    if task_id == "3.1":
        combine = [
            ("the heads are concatenated along the batch dimension (dim=0) instead of the last one", lambda outs: torch.cat(outs, dim=0)),
            ("the heads are concatenated along the token dimension (dim=1) instead of the last one", lambda outs: torch.cat(outs, dim=1)),
            ("the heads' outputs are added instead of concatenated along the last dimension", lambda outs: sum(outs)),
            ("the heads' outputs are averaged instead of concatenated along the last dimension", lambda outs: sum(outs) / len(outs)),
            ("only the first head's output is returned", lambda outs: outs[0]),
        ]
        return [(m, _subclass("3.1", _wrapper_forward(c))) for m, c in combine]
    if task_id == "3.2":
        return [
            ("the heads are split with view(b, num_heads, num_tokens, head_dim) directly: view as "
             "(b, num_tokens, num_heads, head_dim) first, then transpose(1, 2)", _subclass("3.2", _mha_forward(split_without_transpose=True))),
            ("the heads are merged without transposing back: transpose(1, 2) before the view to "
             "(b, num_tokens, d_out)", _subclass("3.2", _mha_forward(merge_without_transpose=True))),
            ("out_proj is never applied to the combined heads", _subclass("3.2", _mha_forward(use_out_proj=False))),
            ("the scores are divided by sqrt(d_out) instead of sqrt(head_dim)", _subclass("3.2", _mha_scale_by_dout())),
        ] + [(m, _subclass("3.2", _mha_forward(**o))) for o, m in MASKING + SCALING[:1] + SCALING[4:]]
    return []
