"""Hidden cases and known mistakes of chapter 03 (multi-head attention)."""
import functools

import torch

from gptcourse.checking.chapters.attention import multi_head_arguments
from grader.chapters import HiddenSpec
from grader.hidden.attention import MASKING, NEG_INF, SCALING, attend, dropout_internals, module_case
from grader.hidden.casekit import subclass_with_forward

# MultiHeadAttentionWrapper concatenates num_heads outputs of width d_out.
_wrapper = functools.partial(module_case, "3.1", construct=multi_head_arguments, num_heads=2,
                             out_width=lambda args: args["d_out"] * args["num_heads"])
_mha = functools.partial(module_case, "3.2", construct=multi_head_arguments, num_heads=2, identity_out_proj=True)


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

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


def _variants_3_1():
    combine = [
        ("the heads are concatenated along the batch dimension (dim=0) instead of the last one", lambda outs: torch.cat(outs, dim=0)),
        ("the heads are concatenated along the token dimension (dim=1) instead of the last one", lambda outs: torch.cat(outs, dim=1)),
        ("the heads' outputs are added instead of concatenated along the last dimension", lambda outs: sum(outs)),
        ("the heads' outputs are averaged instead of concatenated along the last dimension", lambda outs: sum(outs) / len(outs)),
        ("only the first head's output is returned: concatenate every head's output along the last dimension, "
         "torch.cat([head(x) for head in self.heads], dim=-1)", lambda outs: outs[0]),
    ]
    return [(m, subclass_with_forward("3.1", _wrapper_forward(c))) for m, c in combine]


def _variants_3_2():
    mha = lambda **options: subclass_with_forward("3.2", _mha_forward(**options))  # noqa: E731
    return [
        ("the heads are split with view(b, num_heads, num_tokens, head_dim) directly: view as "
         "(b, num_tokens, num_heads, head_dim) first, then transpose(1, 2)", mha(split_without_transpose=True)),
        ("the heads are merged without transposing back: transpose(1, 2) before the view to "
         "(b, num_tokens, d_out)", mha(merge_without_transpose=True)),
        ("out_proj is never applied to the combined heads", mha(use_out_proj=False)),
        ("the scores are divided by sqrt(d_out) instead of sqrt(head_dim)", subclass_with_forward("3.2", _mha_scale_by_dout())),
    ] + [(m, mha(**o)) for o, m in MASKING + SCALING[:1] + SCALING[4:]]


# ------------------------------------------------------------------------------------------
# Each task's hidden cases and known mistakes, in one place (grader/chapters/__init__.py: HiddenSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "3.1": HiddenSpec(
        public=lambda rng: [
            _wrapper(rng, batch=2, tokens=6, d_in=3, d_out=2),
            _wrapper(rng, batch=1, tokens=4, d_in=5, d_out=3, num_heads=3, context_length=7, qkv_bias=True),
            _wrapper(rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=2, dropout=0.5),
        ],
        hidden=lambda rng: [
            _wrapper(rng, batch=3, tokens=5, d_in=4, d_out=2, num_heads=1, context_length=9, qkv_bias=True),
            _wrapper(rng, batch=2, tokens=6, d_in=2, d_out=3, num_heads=4, dropout=0.3, dtype="float64"),
            _wrapper(rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=2, num_heads=3, context_length=6, dropout=0.5),
        ],
        mistakes=_variants_3_1,
        extras=functools.partial(dropout_internals, heads="wrapper")),
    "3.2": HiddenSpec(
        public=lambda rng: [
            _mha(rng, batch=2, tokens=6, d_in=3, d_out=4),
            _mha(rng, batch=1, tokens=4, d_in=5, d_out=6, num_heads=3, context_length=7, qkv_bias=True),
            _mha(rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=4, dropout=0.5),
            _mha(rng, kind="raises", d_in=4, d_out=5, context_length=6),
        ],
        hidden=lambda rng: [
            _mha(rng, batch=3, tokens=5, d_in=4, d_out=6, num_heads=1, context_length=9, qkv_bias=True),
            _mha(rng, batch=2, tokens=6, d_in=3, d_out=6, num_heads=3, dropout=0.3, dtype="float64"),
            _mha(rng, batch=2, tokens=5, d_in=5, d_out=4, num_heads=4, context_length=8),
            _mha(rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=6, num_heads=3, context_length=6, dropout=0.5),
            _mha(rng, kind="raises", d_in=3, d_out=7, num_heads=3, context_length=6),
        ],
        mistakes=_variants_3_2,
        extras=functools.partial(dropout_internals, heads="split")),
}
