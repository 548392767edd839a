"""Chapter 03, multi-head attention: its tasks, their probes and hints."""
from gptcourse.chapters import attention
from gptcourse.course import tasks_of

CHAPTER = "03_multihead_attention"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/preflight.py).
GRADING_DATA = ()


PROBES = {
    "3.1": attention.causal_module_probes(attention.multi_head_arguments, ("heads",)),
    "3.2": attention.causal_module_probes(
        attention.multi_head_arguments, attention.QKV + ("out_proj", "mask"),
        raises_message=("creating the module with d_out not divisible by num_heads should raise an error "
                        "(e.g. ValueError or assert) instead of silently building a broken module")),
}

KEY_NAMES = dict(attention.KEY_NAMES, raises="Check that d_out is divisible by num_heads")

ERROR_HINTS = [
    (attention.BOOL_MASK, attention.BOOL_MASK_BUFFER_HINT, None),
    (attention.SIZE_MISMATCH, attention.MASK_TRUNCATION_HINT, None),
]

HINTS = {task.id: [attention.nan_hint] for task in tasks_of(CHAPTER)}
