"""The grader's chapter module of chapter 03 (multi-head attention): its public and hidden
cases and its known mistakes."""
import functools

import torch

from gptcourse.checking.chapters.attention import multi_head_arguments
from grader.chapters import GraderSpec
from grader.chapters.attention import dropout_internals, module_case, multi_head_mistakes
from grader.chapters.casekit import subclass_with_forward

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


def _mistakes_3_1():
    combine = [
        ("the heads are concatenated along the batch dimension (dim=0) instead of the last one", lambda outs: torch.cat(outs, dim=0)),
        ("the heads are concatenated along the token dimension (dim=1) instead of the last one", lambda outs: torch.cat(outs, dim=1)),
        ("the heads' outputs are added instead of concatenated along the last dimension", lambda outs: sum(outs)),
        ("the heads' outputs are averaged instead of concatenated along the last dimension", lambda outs: sum(outs) / len(outs)),
        ("only the first head's output is returned: concatenate every head's output along the last dimension, "
         "torch.cat([head(x) for head in self.heads], dim=-1)", lambda outs: outs[0]),
    ]
    return [(m, subclass_with_forward("3.1", _wrapper_forward(c))) for m, c in combine]


def _mistakes_3_2():
    return [(message, subclass_with_forward("3.2", forward)) for message, forward in multi_head_mistakes()]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "3.1": GraderSpec(
        public=lambda rng: [
            _wrapper(rng, batch=2, tokens=6, d_in=3, d_out=2),
            _wrapper(rng, batch=1, tokens=4, d_in=5, d_out=3, num_heads=3, context_length=7, qkv_bias=True),
            _wrapper(rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=2, dropout=0.5),
        ],
        hidden=lambda rng: [
            _wrapper(rng, batch=3, tokens=5, d_in=4, d_out=2, num_heads=1, context_length=9, qkv_bias=True),
            _wrapper(rng, batch=2, tokens=6, d_in=2, d_out=3, num_heads=4, dropout=0.3, dtype="float64"),
            _wrapper(rng, batch=2, tokens=5, d_in=4, d_out=3, qkv_bias=True, dtype="float64", large_scores=25.0),
            _wrapper(rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=2, num_heads=3, context_length=6, dropout=0.5),
        ],
        mistakes=_mistakes_3_1,
        extras=functools.partial(dropout_internals, heads="wrapper")),
    "3.2": GraderSpec(
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
            _mha(rng, batch=2, tokens=5, d_in=4, d_out=6, num_heads=2, qkv_bias=True, dtype="float64", large_scores=25.0),
            _mha(rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=6, num_heads=3, context_length=6, dropout=0.5),
            _mha(rng, kind="raises", d_in=3, d_out=7, num_heads=3, context_length=6),
        ],
        mistakes=_mistakes_3_2,
        extras=functools.partial(dropout_internals, heads="split")),
}
