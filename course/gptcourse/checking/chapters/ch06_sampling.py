"""Chapter 06, decoding and sampling: its tasks, their probes and the hints.

The filters (6.1 to 6.3) are functions of a tensor of logits, compared exactly with the
reference on many rows at once. `generate` (6.4) drives two toy models whose next-token
logits are known (gptcourse.checking.chapters.toys): NextTokenModel (it predicts the sum of the ids it sees, so
cropping and appending show in the ids) for greedy decoding and the end token, and
TableModel (the next token depends on the last one through a table of logits) for sampling,
which is judged by the distribution of many draws (kinds.Sampler). The key-value cache
(6.5) is a module with state: a script of calls feeds a sequence in chunks and must give
the outputs of the whole sequence (kinds.ModuleSteps).
"""
import numpy as np
import torch

from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec, attention
from gptcourse.checking.chapters.toys import NextTokenModel, TableModel
from gptcourse.checking.contract import Contract, small_number
from gptcourse.checking.probes import ProbeFailure
from gptcourse.tokenizer import GPT2_FILES

CHAPTER = "06_sampling"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = GPT2_FILES

# Two numbers of the cases that the contract below states, so that it states them from here: the
# grader's chapter module builds its cases with them.
TOP_P_MARGIN = 2e-3  # no running total of a top-p case's probabilities lies closer than this to p
SAMPLE_ROWS = 20_000  # rows of one prompt a sampling case of generate draws, in one call


# ------------------------------------------------------------------------------------------
# 6.1 to 6.3: filters of logits
# ------------------------------------------------------------------------------------------

def temperature_arguments(probe):
    """softmax_with_temperature(logits, temperature)."""
    return [probe.input("logits", requires_grad=True), probe.case.args["temperature"]], {}


def top_k_arguments(probe):
    """top_k_logits(logits, k)."""
    return [probe.input("logits"), probe.case.args["k"]], {}


def top_p_arguments(probe):
    """top_p_logits(logits, p)."""
    return [probe.input("logits"), probe.case.args["p"]], {}


# ------------------------------------------------------------------------------------------
# 6.4 generate: the models it drives
# ------------------------------------------------------------------------------------------

def generation_model(probe):
    """The case's model: NextTokenModel (greedy, end token) or TableModel (sampling)."""
    args = probe.case.args
    if args["model"] == "next_token":
        model = NextTokenModel(args["vocab_size"], args["context_length"])
    else:
        model = TableModel(probe.case.arrays["table"], args["context_length"])
    probe.kept["generation_model"] = probe.module_input("model", model)
    return probe.kept["generation_model"]


def generate_keywords(args):
    """The optional arguments a case passes (by name, as the contract's signature has them)."""
    return {key: args[key] for key in ("temperature", "top_k", "top_p", "eos_id") if key in args}


def generate_arguments(probe):
    """generate(model, idx, max_new_tokens, context_size, **options) on the case's prompt."""
    args = probe.case.args
    model = generation_model(probe)
    return [model, probe.input("idx"), args["max_new_tokens"], args["context_size"]], generate_keywords(args)


def record_grad_mode(probe):
    calls = probe.kept["generation_model"].grad_enabled
    probe.record_value("model_calls_with_grad", sum(bool(c) for c in calls), "the model calls with gradients on")


def returned_ids(probe, result, batch):
    """The returned ids as a (batch, num_tokens) int64 tensor on the CPU, or a clear failure."""
    if not isinstance(result, torch.Tensor):
        raise ProbeFailure(f"generate should return a tensor of token ids, got {type(result).__name__}")
    if result.dim() != 2 or result.shape[0] != batch:
        raise ProbeFailure(f"generate should return ids of shape (batch, num_tokens) with batch={batch}, "
                           f"got shape {tuple(result.shape)}")
    return torch.Tensor.detach(result).cpu().to(torch.int64)


def record_until_end(probe):
    """What the contract pins down when generation stops at an end token: each row's new tokens
    before its first end token (what a row holds after it is free: more samples, or padding),
    and how many tokens were added (with the last row's end token or without it, as the book
    breaks before appending it: both readings are accepted, see the grader's chapter module)."""
    ids = returned_ids(probe, probe.result, probe.case.arrays["idx"].shape[0])
    prompt = probe.case.arrays["idx"].shape[1]
    eos_id = probe.case.args["eos_id"]
    rows = []
    for row in ids[:, prompt:].tolist():
        rows.append(row[: row.index(eos_id)] if eos_id in row else row)
    probe.record_value("num_generated", ids.shape[1] - prompt, "the number of tokens added to each row")
    probe.record_value("rows_until_end", rows, "each row's new tokens before its first end token")
    probe.record_value("prompt_kept", bool(torch.equal(ids[:, :prompt], torch.as_tensor(probe.case.arrays["idx"]))),
                   "whether the returned rows start with the prompt")
    record_grad_mode(probe)


def sample_outcomes(probe, fn):
    """Many rows of the same prompt in one batch; each row's new tokens as one outcome number
    (first token + vocab * second token + ...), counted by kinds.Sampler."""
    args = probe.case.args
    model = generation_model(probe)
    prompt = probe.tensor("idx").repeat(args["num_rows"], 1)  # on the case's device, with the model
    result = fn(model, prompt, args["max_new_tokens"], args["context_size"], **generate_keywords(args))
    ids = returned_ids(probe, result, args["num_rows"])
    new = ids[:, prompt.shape[1]:]
    if new.shape[1] != args["max_new_tokens"]:
        raise ProbeFailure(f"generate added {new.shape[1]} tokens to each row, expected "
                           f"max_new_tokens={args['max_new_tokens']}")
    vocab = probe.case.arrays["table"].shape[1]
    if new.numel() and (int(new.min()) < 0 or int(new.max()) >= vocab):
        raise ProbeFailure(f"generate returned token ids outside 0..{vocab - 1}")
    weights = vocab ** torch.arange(new.shape[1])
    return (new * weights).sum(dim=1)


def describe_new_tokens(outcome, case):
    """'the new token 3' or 'the new tokens 3, 1': an outcome number of sample_outcomes, decoded."""
    vocab = case.arrays["table"].shape[1]
    tokens = [(outcome // vocab ** i) % vocab for i in range(case.args["max_new_tokens"])]
    return f"the new token{'s' if len(tokens) > 1 else ''} {', '.join(map(str, tokens))}"


# ------------------------------------------------------------------------------------------
# 6.5 KVCacheMultiHeadAttention
# ------------------------------------------------------------------------------------------

def cached_dropout_problem(got, expected, case):
    """Chunks fed to the cache in train mode: every output row must be what dropping some of
    that position's attention weights gives (chapter 03's dropout judge, row by row), and some
    weight must be dropped. Rows of a chunk are the positions start .. end - 1 of the sequence."""
    steps = SPECS["6.5"].probes["steps_train"]
    outputs = [(got.get(key), range(start, end)) for key, (start, end) in steps.fed_chunks(case)]
    return attention.dropped_weights_problem(outputs, expected, case)


KEY_NAMES = dict(
    attention.KEY_NAMES,
    raises="Check that d_out is divisible by num_heads",
    probs="The returned probabilities",
    logits_out="The returned logits",
    ids="The returned token ids",
    model_calls_with_grad="Model calls made with gradients enabled",
    num_generated="The number of tokens added",
    rows_until_end="The new tokens of each row, before its first end token",
    prompt_kept="The prompt at the start of each returned row",
    counts="The sampled tokens",
)
KEY_NAMES["after/logits"] = "The input logits after the call"
KEY_NAMES["after/idx"] = "The input idx after the call"

_NOT_OURS = r"^(?!DeviceMixError|ProbeFailure)"


def _refused(hint, step):
    """Entries for an error the student's own code raised on purpose in a call that must work: a
    `raise` or `assert` line, or (where the line cannot be read) a ValueError or AssertionError."""
    return [(_NOT_OURS, hint, ("6.5",), {"step": step, "where": r"\b(raise|assert)\b"}),
            (r"^(ValueError|AssertionError):", hint, ("6.5",), {"step": step})]


ERROR_HINTS = [
    (r"Dimension out of range",
     "the softmax is over a dimension the logits do not have: they may be one row of shape (vocab,) or a batch "
     "(..., vocab), and the probabilities are over the vocabulary, the last dimension: "
     "torch.softmax(logits / temperature, dim=-1)", ("6.1",)),
    (r"Dimension out of range",
     "a dimension the logits do not have: they may be one row of shape (vocab,) or a batch (..., vocab); work "
     "over the last dimension, the vocabulary: dim=-1 in topk, sort, softmax and cumsum", ("6.2", "6.3")),
    (r"too many indices for tensor of dimension 1",
     "the logits can be a single 1-D row of shape (vocab,), where [:, -1] has no second dimension: index the "
     "last dimension with [..., -1:], which keeps the dimension (shape (..., 1): one threshold per row, "
     "compared with its own row), or pass keepdim=True", ("6.2", "6.3")),
    (r"must match the size of tensor b|The size of tensor a",
     "the k-th largest values do not line up with the rows: torch.topk(logits, k, dim=-1) gives values of "
     "shape (..., k); the k-th of each row is values[..., -1:], of shape (..., 1), which compares with its "
     "own row", ("6.2",)),
    (r"selected index k out of range",
     "k is larger than the number of logits in a row: torch.topk(logits, k, dim=-1) needs k <= logits.shape[-1]",
     ("6.2",)),
    (r"index out of range in self",
     "the model got more tokens than its context length: crop the input to the last context_size tokens "
     "before every call, idx[:, -context_size:]", ("6.4",)),
    (r"Tensors must have same number of dimensions|Sizes of tensors must match",
     "the next token must be appended as a column of shape (batch, 1): torch.multinomial(probs, num_samples=1) "
     "and argmax(..., dim=-1, keepdim=True) both give one; then torch.cat((idx, idx_next), dim=1)", ("6.4",)),
    (r"probability tensor contains either `inf`, `nan` or element < 0|invalid multinomial distribution",
     "torch.multinomial got something that is not a probability distribution: at temperature=0 take the "
     "argmax instead (dividing by 0 gives inf and NaN); otherwise sample from softmax(logits / temperature) "
     "after the filters, never from the logits", ("6.4",)),
    (r"Boolean value of Tensor with more than one (value|element) is ambiguous",
     "a comparison of a whole batch used in an `if`: for a batch, combine the rows first, "
     "e.g. `if finished.all():`", ("6.4",)),
    (_NOT_OURS,
     "this call ran without the cache (use_cache=False) after cached calls: then forward must ignore cache_k "
     "and cache_v, whatever they hold, and attend within x only, as MultiHeadAttention does",
     ("6.5",), {"step": r"use_cache=False"}),
    (_NOT_OURS,
     "a plain call, forward(x) with use_cache left at False, must not touch the cache: called twice on the same "
     "input it gives the same output; only calls with use_cache=True read and write cache_k and cache_v",
     ("6.5",), {"step": r"^running forward"}),
    (attention.BOOL_MASK, attention.BOOL_MASK_BUFFER_HINT, ("6.5",)),
    (attention.SIZE_MISMATCH,
     "the mask does not fit the scores: with a cache the scores are (num_tokens new queries) x (all keys "
     "so far), so the mask's rows are the new tokens' positions, start .. start + num_tokens, and its "
     "columns all the keys, :start + num_tokens", ("6.5",), attention.ON_A_MASK_LINE),
    (r"must match the size of tensor b \(\d+\) at non-singleton dimension 1\b",
     "on a call with the cache, two tensors differ in dimension 1, which in (batch, num_heads, num_tokens, "
     "head_dim) is the heads: the heads must stay num_heads, so keys and values join the cache along the "
     "tokens, torch.cat((self.cache_k, keys), dim=2)", ("6.5",), {"step": r"use_cache=True"}),
    *_refused("your module refused the first chunk after reset_cache(), when nothing is cached: the next chunk "
              "starts at position 0 then, so reset_cache() must also put any position counter you keep back to 0", r"tokens 0 to \d+, use_cache=True"),
    *_refused("your module refused a chunk that fits: the cached tokens plus the new ones may fill the cache "
              "exactly up to context_length, and that must be accepted; refuse only when start + num_tokens > "
              "context_length (not >=)", r"use_cache=True"),
]


def _probability_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "probs" or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray) \
            or have.shape != want.shape:
        return ""
    if np.isnan(have).any() and not np.isnan(want).any():
        return _nan_probabilities(have, case)
    return _not_a_distribution(have) or _temperature_applied(have, case)


def _temperature_applied(probs, case):
    """The temperature the probabilities were made with, when they are exactly a softmax of the
    logits at one temperature other than the case's: estimated from the first row's two most probable
    tokens (log p_i - log p_top = (logit_i - logit_top) / T'), then checked on every entry."""
    logits, temperature = case.arrays.get("logits"), case.args.get("temperature")
    if logits is None or not temperature or probs.shape != np.shape(logits):
        return ""
    logits = np.asarray(logits, dtype=np.float64)
    first, row = probs.reshape(-1, probs.shape[-1])[0], logits.reshape(-1, probs.shape[-1])[0]
    order = np.argsort(-first)
    top, second = int(order[0]), int(order[1])
    if not (first[second] > 0 and np.isfinite(row[second]) and row[top] - row[second] > 1e-6):
        return ""
    used = float((row[top] - row[second]) / (np.log(first[top]) - np.log(first[second])))
    if not np.isfinite(used) or used <= 0 or np.isclose(used, temperature, rtol=1e-2):
        return ""
    scaled = logits / used
    made = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    made /= made.sum(axis=-1, keepdims=True)
    if not np.allclose(made, probs, rtol=1e-3, atol=1e-6):
        return ""  # not a softmax at any one temperature: nothing to say about the temperature
    named = next((name for name, value in (("the temperature squared", temperature ** 2), ("1", 1.0),
                                           ("1 / temperature", 1 / temperature), ("its square root", temperature ** 0.5))
                  if np.isclose(used, value, rtol=1e-2)), "")
    return (f"your probabilities are a softmax of the logits at temperature {used:.4g}, not {temperature:g}"
            + (f" ({named})" if named else "") + ": divide the logits by the temperature itself, once")


def _not_a_distribution(values):
    """What the values are, when they are not one probability distribution per row: said only as far
    as the values show it (a softmax over another dimension, or no softmax at all)."""
    finite = values[np.isfinite(values)]
    if finite.size and (finite.min() < 0 or finite.max() > 1 + 1e-6):
        return (f"these are not probabilities (values from {finite.min():.4g} to {finite.max():.4g}; probabilities "
                f"lie between 0 and 1): the softmax of logits / temperature is what the task returns")
    if np.allclose(values.sum(axis=-1), 1.0, atol=1e-4):
        return ""
    for dim in range(values.ndim - 1):
        if np.allclose(values.sum(axis=dim), 1.0, atol=1e-4):
            return (f"your values add up to 1 along dimension {dim}, not along the last one: the probabilities are "
                    f"over the vocabulary, the last dimension (dim=-1)")
    return ("the values lie between 0 and 1, but a row does not add up to 1: each row must be divided by its own "
            "sum (over the last dimension)")


def _nan_probabilities(values, case):
    """NaN where numbers are expected: overflow is claimed only where it could happen (a large
    logit / temperature); otherwise the observation alone is said."""
    logits = case.arrays.get("logits")
    largest = float(np.nanmax(np.abs(logits))) / case.args.get("temperature", 1.0) if logits is not None else None
    if largest is not None and largest > 80:
        return (f"NaN: logits / temperature reach {largest:.4g} here, and exp of anything above about 88 overflows "
                f"in float32 (inf / inf is NaN); torch.softmax subtracts the row's maximum first and never overflows")
    rows = np.isnan(values).reshape(-1, values.shape[-1]).any(axis=-1)
    return (f"NaN in {int(rows.sum())} of {rows.size} rows although logits / temperature stay small here: a NaN "
            f"came in before the softmax (0 * inf, inf - inf, or a division by 0 are the usual sources)")


def _filter_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "logits_out" or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray) \
            or have.shape != want.shape:
        return ""
    kept_have, kept_want = np.isfinite(have), np.isfinite(want)
    finite = have[np.isfinite(have)]
    if finite.size and finite.min() >= 0 and np.allclose(have.sum(axis=-1), 1.0, atol=1e-4) \
            and not np.allclose(want[kept_want].sum(), have.sum()):
        return ("your function returns probabilities (each row adds up to 1); the task returns logits, with the "
                "removed ones set to -inf: leave the softmax to the sampler")
    if (have == 0).any() and not (want == 0).any() and (have[~kept_want] == 0).all():
        return "the removed logits must be -inf (float(\"-inf\")), not 0: a logit of 0 still has a probability"
    if (kept_have == kept_want).all() and not np.allclose(have[kept_want], want[kept_want]):
        return "the kept logits must keep their values: only the removed ones change (to -inf)"
    counts_have, counts_want = kept_have.sum(axis=-1), kept_want.sum(axis=-1)
    if (counts_have == counts_want).all() and not (kept_have == kept_want).all():
        return ("the right number of logits is kept, but not the right ones in some row: keep each row's "
                "largest ones, in their places in the vocabulary")
    wrong_rows = np.argwhere(counts_have != counts_want) if have.ndim > 1 else \
        np.zeros((int(counts_have != counts_want), 0), dtype=int)
    if len(wrong_rows):
        row = tuple(int(i) for i in wrong_rows[0])
        where = "the row" if not row else f"row {row[0]}" if len(row) == 1 else f"row {list(row)}"
        how_many = f" (the number differs in {len(wrong_rows)} of {counts_want.size} rows)" if counts_want.size > 1 else ""
        rule = (f"every logit >= the row's own k-th largest value (k={case.args['k']}) stays" if case.task == "6.2"
                else f"the most probable tokens stay until their mass reaches p={case.args['p']}, at least one")
        kept = int(counts_have[row])
        return (f"{kept} logit{'' if kept == 1 else 's'} kept in {where}, expected {int(counts_want[row])}{how_many}: "
                f"{rule}, in each row separately")
    return ""


def _generation_hint(key, got, expected, case):
    if key == "model_calls_with_grad":
        return ("the model ran with gradients enabled, recording a graph no one needs: call it inside "
                "`with torch.no_grad():`")
    have, want = got.get(key), expected.get(key)
    if key == "prompt_kept":
        return ("the returned rows must start with the prompt: return the whole sequence, the input followed by "
                "the new tokens (torch.cat((idx, idx_next), dim=1) at every step)")
    if key == "ids" and isinstance(have, np.ndarray) and isinstance(want, np.ndarray) and have.ndim == 2 \
            and have.shape == (want.shape[0], case.args["max_new_tokens"]) != want.shape:
        return "only the new tokens are returned: return the whole sequence, the input followed by the new tokens"
    if key == "ids" and isinstance(have, np.ndarray) and isinstance(want, np.ndarray) and have.shape == want.shape:
        return ("other tokens than greedy decoding picks: with temperature=0 take the largest logit of the last "
                "position, torch.argmax(logits[:, -1, :], dim=-1, keepdim=True), without sampling or filtering")
    if key == "num_generated" and isinstance(have, int) and isinstance(want, int):
        if have == case.args["max_new_tokens"] and want < have:
            return ("generation did not stop although every row had produced eos_id: after each step note which "
                    "rows have produced it, and stop once all of them have")
        if have < want:
            return ("generation stopped before every row had produced eos_id: keep going until all rows have "
                    "(a row that finished early may go on with anything, or repeat eos_id)")
    return ""


def _cache_hint(key, got, expected, case):
    """What a wrong output of a cached call, or a refusal that did not happen, means for a cache."""
    have = got.get(key)
    if (case.kind == "steps" and case.args.get("dropout", 0.0) > 0 and key.startswith("step ")
            and isinstance(have, np.ndarray)):
        # The same script with dropout=0 passed before this case (cases run in order, and the
        # probe stops at the first that fails): what differs here is dropout in eval mode.
        return ("with dropout > 0 in eval mode (module.eval()) the output changed: dropout must do nothing "
                "in eval mode, on the cached path too. nn.Dropout (self.dropout) switches itself off; "
                "F.dropout needs training=self.training")
    if key.endswith(kinds.ModuleSteps.REFUSAL) and isinstance(have, dict):
        if not have.get("raised"):
            return (f"feeding more tokens than context_length={case.args['context_length']} was accepted: check "
                    f"that the cached tokens plus the new ones fit, and raise an error (ValueError) that says so")
        if not have.get("by_your_code"):
            return (f"past context_length={case.args['context_length']} the module failed inside PyTorch instead "
                    f"of with a clear error of its own: check that the cached tokens plus the new ones fit, and "
                    f"raise an error (ValueError) that says so")
    if key.endswith(" is None") and isinstance(have, dict):
        holding = [name for name, is_none in have.items() if not is_none]
        return (f"{' and '.join(holding) or 'the cache'} still hold{'s' if len(holding) == 1 else ''} something after "
                f"reset_cache(): it must set both cache_k and cache_v to None")
    if key.startswith("step ") and "use_cache=True" in key and isinstance(have, np.ndarray):
        return ("with use_cache=True each chunk must give exactly what the whole sequence gives at those "
                "positions: its queries attend to the cached keys and values and to the chunk's own, up to "
                "their position")
    if key.startswith("step ") and "use_cache=False" in key:
        return "without the cache, forward must ignore cache_k and cache_v and attend within x only"
    return ""


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "6.1": TaskSpec(
        contract=Contract(
            pinned=(
                "A softmax over the last dimension of `logits / temperature`, for any leading dimensions and "
                "temperatures from 0.003 to 50, without overflow.",
                "A logit of `-inf` comes out as probability 0; gradients flow back; the logits stay unchanged.",
            )),
        probes={"forward": kinds.Function(temperature_arguments, outputs=(("probs", "the returned probabilities"),),
                                          tensors=True, grad_of="probs")},
        hints=(_probability_hint,)),
    "6.2": TaskSpec(
        contract=Contract(
            pinned=(
                "In every row, logits below the row's k-th largest become `-inf`, the others keep their values; "
                "ties with the k-th value stay, so a row can keep more than k.",
                "`k = 1` and `k = vocab_size`, rows that already hold `-inf`, any leading dimensions; the logits "
                "passed in stay unchanged.",
            )),
        probes={"forward": kinds.Function(top_k_arguments, outputs=(("logits_out", "the returned logits"),),
                                          tensors=True)},
        hints=(_filter_hint,)),
    "6.3": TaskSpec(
        contract=Contract(
            pinned=(
                "Each row keeps its most probable tokens, in order, up to and including the one whose running "
                "total reaches `p`; the rest become `-inf`, the kept logits keep their values.",
                "At least one token stays, also for `p = 0` and for a `p` below the top probability; rows that "
                "already hold `-inf`; any leading dimensions; the logits passed in stay unchanged.",
                "Large logits (a hidden float32 case with every logit about 100): the probabilities come from a "
                "softmax that does not overflow.",
            ),
            free=(
                "The order among tokens of equal probability: no case puts a tie at the cut, and no running "
                f"total within {small_number(TOP_P_MARGIN)} of `p`.",
            )),
        probes={"forward": kinds.Function(top_p_arguments, outputs=(("logits_out", "the returned logits"),),
                                          tensors=True)},
        hints=(_filter_hint,)),
    "6.4": TaskSpec(
        contract=Contract(
            pinned=(
                "Each step crops to the last `context_size` tokens and reads the last position's logits, without "
                "gradients; `temperature == 0` picks the largest logit (whatever `top_k` and `top_p` say).",
                "Otherwise top-k, then top-p, then the softmax with the temperature, and a draw from that "
                f"distribution: {SAMPLE_ROWS:,} draws must fit it (and not the other orders).",
                "With `eos_id`, generation stops once every row has produced it among its new tokens (one already "
                "in the prompt does not count); without it, exactly `max_new_tokens` tokens are added.",
            ),
            free=(
                "What a row holds after its first `eos_id`, and whether the step that finishes the last row appends "
                "its token (the book breaks first).",
                "How the draw is made, as long as it follows the distribution.",
            )),
        probes={"greedy": kinds.Function(generate_arguments, outputs=(("ids", "the returned token ids"),),
                                         device_pass=True, also=record_grad_mode),
                "end_token": kinds.Function(generate_arguments, outputs=(), device_pass=True, also=record_until_end),
                "sample": kinds.Sampler(sample_outcomes, describe=lambda k, case: describe_new_tokens(k, case))},
        hints=(_generation_hint,)),
    "6.5": TaskSpec(
        contract=Contract(
            pinned=(
                "Everything of 3.2 (parameters, `mask`, dropout, the error in `__init__` for `d_out` not divisible "
                "by `num_heads`, large scores), and without the cache the outputs of `MultiHeadAttention` with the same "
                "weights.",
                "With `use_cache=True` the keys and values of the tokens seen so far are kept in `cache_k` and "
                "`cache_v`: a sequence fed in chunks of any sizes gives the outputs of feeding it whole.",
                "`reset_cache()` sets both to `None` and the next call starts at position 0; a second sequence may "
                "run up to `context_length` tokens.",
                "A chunk that would go past `context_length` is refused by the student's own `raise` or `assert` "
                "(an error from inside PyTorch does not count).",
                "Dropout on the attention weights on both paths; none in eval mode.",
                "Large scores on both paths, as in 3.2: a hidden float64 case feeds a sequence in chunks with every "
                "query and key bias set to 25.",
            ),
            free=(
                "The state of the cache after a refused call.",
                "Whether the class subclasses the chapter 03 module or is written whole.",
            )),
        probes=dict(attention.causal_module_probes(
            attention.multi_head_arguments, attention.QKV + ("out_proj", "mask"),
            raises_message=("creating the module with d_out not divisible by num_heads should raise an error "
                            "(e.g. ValueError or assert) instead of silently building a broken module")),
            steps=kinds.ModuleSteps(attention.multi_head_arguments),
            steps_train=kinds.ModuleSteps(attention.multi_head_arguments, train_judge=cached_dropout_problem)),
        hints=(attention.nan_hint, _cache_hint)),
}
