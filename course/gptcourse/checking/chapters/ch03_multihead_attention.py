"""Chapter 03, multi-head attention: its tasks, their probes and hints."""
from gptcourse.checking.chapters import TaskSpec, attention
from gptcourse.checking.contract import Contract

CHAPTER = "03_multihead_attention"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = ()


KEY_NAMES = dict(attention.KEY_NAMES, raises="Check that d_out is divisible by num_heads")

ERROR_HINTS = [
    (attention.BOOL_MASK, attention.BOOL_MASK_BUFFER_HINT, None),
    (attention.SIZE_MISMATCH, attention.MASK_TRUNCATION_HINT, None, attention.ON_A_MASK_LINE),
]


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "3.1": TaskSpec(
        contract=Contract(
            pinned=(
                "`heads` is an `nn.ModuleList` of `num_heads` separate `CausalAttention` modules built with the "
                "given arguments.",
                "The heads' outputs are concatenated on the last dimension: width `num_heads * d_out`, for one to "
                "four heads; dropout as in 2.5, in every head; large scores as in 2.5.",
            )),
        probes=attention.causal_module_probes(attention.multi_head_arguments, ("heads",)),
        hints=(attention.nan_hint,)),
    "3.2": TaskSpec(
        contract=Contract(
            pinned=(
                "`W_query`, `W_key`, `W_value` (`d_in` to `d_out`, bias exactly with `qkv_bias`), `out_proj` "
                "(`d_out` to `d_out`, with bias) and the buffer `mask` as in 2.5.",
                "Head h works on features `h * head_dim` to `(h + 1) * head_dim` of the projections; each head's "
                "scores are divided by `sqrt(head_dim)`; the heads are put back in order and go through `out_proj`.",
                "Causal, dropout on the attention weights as in 2.5, `d_in` different from `d_out`, one to four heads; "
                "large scores as in 2.5.",
                "Building it with `d_out` not divisible by `num_heads` raises (any exception) in the constructor, "
                "`__init__`: an error first raised by `forward` is too late.",
            ),
            free=(
                "How the heads are split and merged (`view` and `transpose`, `reshape`, `einsum`), and which other "
                "attributes the module keeps (`head_dim`, `num_heads`).",
            )),
        probes=attention.causal_module_probes(
            attention.multi_head_arguments, attention.QKV + ("out_proj", "mask"),
            raises_message=("creating the module with d_out not divisible by num_heads should raise an error "
                            "(e.g. ValueError or assert) instead of silently building a broken module")),
        hints=(attention.nan_hint,)),
}
