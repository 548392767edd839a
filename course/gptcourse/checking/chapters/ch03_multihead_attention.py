"""Chapter 03, multi-head attention: its tasks, their probes and hints."""
from gptcourse.checking.chapters import TaskSpec, attention

CHAPTER = "03_multihead_attention"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = ()


KEY_NAMES = dict(attention.KEY_NAMES, raises="Check that d_out is divisible by num_heads")

ERROR_HINTS = [
    (attention.BOOL_MASK, attention.BOOL_MASK_BUFFER_HINT, None),
    (attention.SIZE_MISMATCH, attention.MASK_TRUNCATION_HINT, None),
]


# ------------------------------------------------------------------------------------------
# Each task's probes and hints, in one place (gptcourse/checking/chapters/__init__.py: TaskSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "3.1": TaskSpec(
        probes=attention.causal_module_probes(attention.multi_head_arguments, ("heads",)),
        hints=(attention.nan_hint,)),
    "3.2": TaskSpec(
        probes=attention.causal_module_probes(
            attention.multi_head_arguments, attention.QKV + ("out_proj", "mask"),
            raises_message=("creating the module with d_out not divisible by num_heads should raise an error "
                            "(e.g. ValueError or assert) instead of silently building a broken module")),
        hints=(attention.nan_hint,)),
}
