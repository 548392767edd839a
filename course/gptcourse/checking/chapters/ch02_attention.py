"""Chapter 02, attention and causal masking: its tasks, their probes and hints."""
from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec, attention

CHAPTER = "02_attention"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = ()


def self_attention_arguments(args):
    """SelfAttention_v1(d_in, d_out), SelfAttention_v2(d_in, d_out, qkv_bias=False)."""
    return [args["d_in"], args["d_out"]], ({"qkv_bias": True} if args.get("qkv_bias") else {})


def causal_attention_arguments(args):
    """CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False)."""
    positional = [args["d_in"], args["d_out"], args["context_length"], args["dropout"]]
    return positional, ({"qkv_bias": True} if args.get("qkv_bias") else {})


KEY_NAMES = dict(attention.KEY_NAMES)

ERROR_HINTS = [
    (attention.BOOL_MASK, attention.BOOL_MASK_BUFFER_HINT, ("2.5",)),
    (attention.BOOL_MASK, attention.BOOL_MASK_HINT, None),
    (attention.SIZE_MISMATCH, attention.MASK_TRUNCATION_HINT, ("2.5",)),
    (attention.SIZE_MISMATCH, attention.BATCHED_INPUT_HINT, ("2.1", "2.4")),
    (r"1D tensors expected",
     "torch.dot takes two 1-D vectors, so a loop over rows works for one (T, d) sequence only: the inputs may be "
     "a batch (B, T, d) as well. Compute all scores at once with a matrix product, inputs @ "
     "inputs.transpose(-2, -1), which works for both", ("2.1",)),
]


# ------------------------------------------------------------------------------------------
# Each task's probes and hints, in one place (gptcourse/checking/chapters/__init__.py: TaskSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "2.1": TaskSpec(
        probes={"forward": kinds.Function(
            lambda probe: ([probe.input("inputs", requires_grad=True)], {}),
            outputs=(("weights", "attn_weights (first returned value)"),
                     ("context", "context_vecs (second returned value)")),
            tensors=True, grad_of="context")},
        hints=(attention.overflow_hint, attention.weights_hint)),
    "2.2": TaskSpec(
        probes={"forward": kinds.ModuleForward(self_attention_arguments, attention.QKV)},
        hints=(attention.overflow_hint,)),
    "2.3": TaskSpec(
        probes={"forward": kinds.ModuleForward(self_attention_arguments, attention.QKV,
                                               extra_parameters_hint=attention.NO_BIAS)},
        hints=(attention.overflow_hint,)),
    "2.4": TaskSpec(
        probes={"forward": kinds.Function(
            lambda probe: ([probe.input("attn_scores", requires_grad=True), probe.case.args["d_k"]], {}),
            outputs=(("weights", "the returned attention weights"),),
            tensors=True, grad_of="weights")},
        hints=(attention.nan_hint, attention.weights_hint, attention.future_weights_hint)),
    "2.5": TaskSpec(
        probes=attention.causal_module_probes(causal_attention_arguments, attention.QKV + ("mask",)),
        hints=(attention.nan_hint,)),
}
