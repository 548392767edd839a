"""Chapter 02, attention and causal masking: its tasks, their probes and hints."""
from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec, attention
from gptcourse.checking.contract import Contract

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
    (attention.SIZE_MISMATCH, attention.MASK_TRUNCATION_HINT, ("2.5",), attention.ON_A_MASK_LINE),
    (attention.SIZE_MISMATCH, attention.BATCHED_INPUT_HINT, ("2.1", "2.4")),
    (r"1D tensors expected",
     "torch.dot takes two 1-D vectors, so a loop over rows works for one (T, d) sequence only: the inputs may be "
     "a batch (B, T, d) as well. Compute all scores at once with a matrix product, inputs @ "
     "inputs.transpose(-2, -1), which works for both", ("2.1",)),
]


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "2.1": TaskSpec(
        contract=Contract(
            pinned=(
                "Returns `(attn_weights, context_vecs)`, in that order; gradients flow back to the inputs.",
                "Raw dot products (no scaling), a softmax over the last dimension, then the weighted sum of the "
                "inputs; inputs of shape `(T, d)` and `(B, T, d)`.",
                "A softmax that stays finite for large scores: float64 cases hold scores past 709, where "
                "`exp(x) / exp(x).sum()` without subtracting the row's maximum overflows to NaN (in float32 it "
                "does past 88; the book shows that naive form and advises the stable one, `torch.softmax`).",
            )),
        probes={"forward": kinds.Function(
            lambda probe: ([probe.input("inputs", requires_grad=True)], {}),
            outputs=(("weights", "attn_weights (first returned value)"),
                     ("context", "context_vecs (second returned value)")),
            tensors=True, grad_of="context")},
        hints=(attention.overflow_hint, attention.weights_hint)),
    "2.2": TaskSpec(
        contract=Contract(
            pinned=(
                "Parameters `W_query`, `W_key`, `W_value`, each an `nn.Parameter` of shape `(d_in, d_out)`, "
                "and no others.",
                "Scores divided by the square root of the keys' width before a softmax over the last dimension; "
                "one sequence `(T, d_in)` in, `(T, d_out)` out, `T = 1` included.",
            ),
            free=(
                "How the matrices are initialised and in which order they are made: the case's weights replace "
                "them (the task text asks for `torch.rand` in order so that the notebook's demo numbers match).",
            )),
        probes={"forward": kinds.ModuleForward(self_attention_arguments, attention.QKV)},
        hints=(attention.overflow_hint,)),
    "2.3": TaskSpec(
        contract=Contract(
            pinned=(
                "`W_query`, `W_key`, `W_value` are `nn.Linear(d_in, d_out)` layers with a bias exactly when "
                "`qkv_bias=True`.",
                "The same computation as 2.2, on one sequence.",
                "A softmax that stays finite for large scores (as in 2.1): a hidden float64 case sets every query "
                "and key bias to 25, so that every score passes 709.",
            ),
            free=("The order in which the layers are made.",)),
        probes={"forward": kinds.ModuleForward(self_attention_arguments, attention.QKV,
                                               extra_parameters_hint=attention.NO_BIAS)},
        hints=(attention.overflow_hint,)),
    "2.4": TaskSpec(
        contract=Contract(
            pinned=(
                "Scores of shape `(..., T, T)` with any number of leading dimensions, `T = 1` included.",
                "Positions above the diagonal are hidden before the softmax, the scores are divided by "
                "`sqrt(d_k)`, the softmax runs over the last dimension: every row sums to 1 and future weights are 0.",
                "Large scores (past 88 in float32 and 709 in float64 after the division, close to each other) give "
                "finite weights, as in 2.1.",
                "The scores passed in stay unchanged; gradients flow back to them.",
            ),
            free=("Whether the scores are scaled before or after they are masked.",)),
        probes={"forward": kinds.Function(
            lambda probe: ([probe.input("attn_scores", requires_grad=True), probe.case.args["d_k"]], {}),
            outputs=(("weights", "the returned attention weights"),),
            tensors=True, grad_of="weights")},
        hints=(attention.nan_hint, attention.weights_hint, attention.future_weights_hint)),
    "2.5": TaskSpec(
        contract=Contract(
            pinned=(
                "`W_query`, `W_key`, `W_value` as in 2.3 and a registered buffer `mask` holding the causal pattern "
                "of `context_length`, cut to the input's `T` tokens in `forward`.",
                "Batched input `(B, T, d_in)` with `T` up to `context_length` (and `T = 1`); output `(B, T, d_out)`.",
                "Causal: an output at position t does not change when later tokens do.",
                "Dropout on the attention weights only, off in eval mode; with `dropout=0.0` train mode gives the "
                "eval-mode output.",
                "Large scores give finite outputs, as in 2.3 (a hidden float64 case with query and key biases of 25; "
                "the scores of a row stay within a few dozen of each other, so a softmax followed by zeroing the "
                "future and renormalising passes).",
            ),
            free=(
                "How the mask is written: ones above the diagonal (what to hide) or on and below it (what to keep), "
                "bool or float, with leading dimensions of size 1.",
                "Whether `mask` is a persistent buffer (`register_buffer(..., persistent=False)` passes; chapter 03's "
                "printout of `\"mask\" in state_dict()` shows True for the book's persistent one).",
                "How dropout draws its numbers (`nn.Dropout` or `F.dropout` with the module's training flag).",
            )),
        probes=attention.causal_module_probes(causal_attention_arguments, attention.QKV + ("mask",)),
        hints=(attention.nan_hint,)),
}
