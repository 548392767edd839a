"""Chapter 01, working with text data: its tasks, their probes and hints."""
import torch

from gptcourse.checking import kinds
from gptcourse.data import read_text
from gptcourse.tokenizer import GPT2_FILES
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.contract import Contract, ReferenceValue

CHAPTER = "01_text_data"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = ("the-verdict", *GPT2_FILES)


def case_text(args):
    """The case's text: given in the case, or a data set of the course by name (the-verdict)."""
    if "text_of" in args:
        return read_text(args["text_of"])
    return args["text"]


def tokenizer_arguments(probe):
    """SimpleTokenizerV2(vocab): a fresh copy per case, so that a tokenizer that changes the
    dict it was given cannot change the test's."""
    return [dict(probe.case.args["vocab"])], {}


def dataset_arguments(probe):
    """GPTDatasetV1(txt, tokenizer, max_length, stride) with the GPT-2 tokenizer."""
    args = probe.case.args
    return [case_text(args), probe.ctx.tokenizer, args["max_length"], args["stride"]], {}


def loader_arguments(probe):
    """create_dataloader_v1(txt, **the case's keyword arguments)."""
    return [case_text(probe.case.args)], dict(probe.case.args["kwargs"])


def embed_arguments(probe):
    """embed(token_ids, tok_emb, pos_emb): two nn.Embedding tables with the case's weights."""
    tables = {}
    for name in ("tok_emb", "pos_emb"):
        num, dim = probe.case.arrays[f"state/{name}.weight"].shape
        tables[name] = probe.module_input(name, torch.nn.Embedding(num, dim))
    return [probe.input("token_ids"), tables["tok_emb"], tables["pos_emb"]], {}


ITEM_TYPES_MESSAGE = ("each item should be a pair (input_ids, target_ids) of tensors of dtype torch.long "
                      "(int64): torch.tensor(list_of_ints) gives exactly that; a list, a float tensor or "
                      "another dtype is not what a GPT's embedding layer takes")


KEY_NAMES = {
    "vocab": "The returned vocabulary",
    "item_types": "What dataset[0] is made of",
    "refused": "Whether creating the data set raised an error",
    "sampler": "The loader's sampler (how it orders the windows)",
    "num_workers": "The loader's num_workers (how many processes load its batches)",
    "batch_shapes": "The shapes of all batches",
    "windows": "Every (input, target) window of the loader, sorted",
    "embedded": "The returned embeddings",
    "grad/tok_emb.weight": "The gradient reaching the token embedding table when the check backpropagates",
    "grad/pos_emb.weight": "The gradient reaching the position embedding table when the check backpropagates",
}

ERROR_HINTS = [
    (r"^KeyError: '", "encode met a token that is not in the vocabulary: look every token up with "
                      "self.str_to_int.get(token, id of '<|unk|>') so that unknown words become <|unk|> "
                      "(and make sure whitespace pieces were dropped before the lookup)", ("1.1",)),
    (r"^KeyError: \d+", "decode looks ids up: it needs the inverse of the vocabulary, "
                        "{token_id: token for token, token_id in vocab.items()}", ("1.1",)),
    (r"Disallowed special token|allowed_special",
     "the text contains <|endoftext|>: tiktoken refuses special tokens unless you allow them, "
     "tokenizer.encode(txt, allowed_special={'<|endoftext|>'})", ("1.3", "1.4")),
    (r"'list' object is not an instance of 'str'|expected string or bytes-like object",
     "the tokenizer got a list where it expects the text: GPTDatasetV1(txt, tokenizer, max_length, stride) "
     "takes the text itself and encodes it with tokenizer.encode(txt); pass txt, not token ids", ("1.4",)),
    (r"stack expects each tensor to be equal size|equal size",
     "the windows of a batch have different lengths: every input and target window must hold exactly "
     "max_length tokens, so stop the loop while a full target still fits "
     "(range(0, len(token_ids) - max_length, stride))", ("1.3", "1.4")),
    (r"^(IndexError|RuntimeError): index out of range in self",
     "an embedding lookup with an index past the end of its table: the positions are "
     "0 .. num_tokens - 1 (torch.arange(num_tokens)), with num_tokens = token_ids.shape[-1]", ("1.5",)),
    (r"must match the size of tensor|The size of tensor a",
     "the token and position embeddings do not line up: the positions are torch.arange(num_tokens) "
     "with num_tokens = token_ids.shape[-1], the sequence length (not the batch size, not the length "
     "of the position table)", ("1.5",)),
    (r"Expected tensor for argument #1 'indices' to have one of the following scalar types|"
     r"expected scalar type Long|indices.*Long",
     "an embedding layer takes integer ids (torch.long): do not convert the ids or positions to float",
     ("1.5",)),
]


def _call_results(key, got, expected, method):
    """(yours, expected) when `key` is the result of a call of `method`, else (None, None)."""
    if key.startswith("call_") and key.endswith("/" + method):
        return got.get(key), expected.get(key)
    return None, None


def _unknown_word_hint(key, got, expected, case):
    """encode gave a different id for an unknown word: <|unk|> is not looked up."""
    have, want = _call_results(key, got, expected, "encode")
    unknown = case.args["vocab"].get("<|unk|>")
    if isinstance(have, list) and isinstance(want, list) and len(have) == len(want):
        for h, w in zip(have, want):
            if w == unknown and h != w:
                return (f"an unknown word should map to the id of '<|unk|>' in the given vocabulary "
                        f"({unknown} here): look it up, self.str_to_int['<|unk|>'], rather than assuming "
                        f"where it is")
    return ""


def _encode_hint(key, got, expected, case):
    """encode made a different number of tokens: the split is not the contract's."""
    have, want = _call_results(key, got, expected, "encode")
    if isinstance(have, list) and isinstance(want, list) and len(have) != len(want):
        return (f"encode made {len(have)} tokens where the task's split makes {len(want)}: split with "
                f"re.split(TOKEN_PATTERN, text), which keeps punctuation, '--' and each whitespace character "
                f"as pieces of their own, then drop every piece that is empty after .strip()")
    return ""


def _decode_hint(key, got, expected, case):
    """decode has the right tokens with the wrong spaces."""
    have, want = _call_results(key, got, expected, "decode")
    if isinstance(have, str) and isinstance(want, str) and have.split() != want.split() \
            and "".join(have.split()) == "".join(want.split()):
        return ("the tokens are right but the spaces are not: join the tokens with one space, then remove only "
                "the spaces before punctuation (, . : ; ? ! \" ( ) '), re.sub(r'\\s+([,.:;?!\"()\\'])', r'\\1', text)")
    return ""


def _vocab_ids_hint(key, got, expected, case):
    """The right tokens with other ids."""
    have, want = got.get(key), expected.get(key)
    if key == "vocab" and isinstance(have, dict) and isinstance(want, dict) and set(have) == set(want):
        return ("the right tokens with other ids: the ids count from 0 in sorted order of the text's tokens "
                "(sorted(set(tokens))), then '<|endoftext|>' and '<|unk|>' get the next two")
    return ""


def _dataset_length_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "len" or not isinstance(have, int) or not isinstance(want, int):
        return ""
    if want == 0 and case.args.get("may_refuse"):
        return ("the text is shorter than one window, so it has no full window: give an empty data set (not a "
                "window that is too short) or raise an error that says the text is too short")
    if have > want:
        return ("more windows than the text's GPT-2 tokens allow: the windows run over "
                "token_ids = tokenizer.encode(txt), and a window starting at i needs the tokens up to "
                "i + max_length for its target: range(0, len(token_ids) - max_length, stride)")
    return ("fewer windows than expected: a window starts every `stride` tokens for as long as a full "
            "target fits, range(0, len(token_ids) - max_length, stride)")


def _window_hint(key, got, expected, case):
    """Dataset items: targets that are not the inputs shifted by one."""
    if not key.startswith("item/"):
        return ""
    item = got.get(key)
    if isinstance(item, list) and len(item) == 2 and all(hasattr(v, "shape") for v in item):
        x, y = item
        if x.shape == y.shape and x.size > 1 and (x == y).all():
            return "the target window equals the input window: targets are the inputs shifted by one token"
        if x.shape == y.shape and x.ndim == 1 and x.size > 1 and not (x[1:] == y[:-1]).all():
            return ("the target window is not the input window shifted by one token: for the input "
                    "token_ids[i:i + max_length] the target is token_ids[i + 1:i + max_length + 1]")
    return ""


def _vocab_unsplit_hint(key, got, expected, case):
    """A token of yours that holds expected tokens joined together: the split missed a separator."""
    have, want = got.get(key), expected.get(key)
    if key != "vocab" or not isinstance(have, dict) or not isinstance(want, dict):
        return ""
    missing = [token for token in want if token not in have and len(token) > 1]
    for token in have:
        if token not in want:
            parts = [part for part in missing if part in token and part != token]
            if parts:
                return (f"yours has the token {token!r} where the task's split gives separate tokens "
                        f"(such as {parts[0]!r}): split with re.split(TOKEN_PATTERN, text), which cuts at "
                        f"punctuation, '--' and whitespace")
    return ""


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("The Verdict (`the-verdict`) has 20,479 characters, and its vocabulary (1.2) 1,132 entries.",
                   "tests/chapters/test_ch01.py::"
                   "test_the_verdict_vocabulary_and_tokenizer_round_trip"),
    ReferenceValue("In GPT-2 tokens The Verdict is 5,145 ids, starting "
                   "`[40, 367, 2885, 1464, 1807, 3619, 402, 271, 10899, 2138]`; "
                   "`\"Hello, do you like tea? <|endoftext|> In the sunlit terraces\"` is "
                   "`[15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]`; "
                   "the first batch of `create_dataloader_v1` with `batch_size=8, max_length=4, stride=4, "
                   "shuffle=False` starts `[[40, 367, 2885, 1464], [1807, 3619, 402, 271], ...]`.",
                   "tests/chapters/test_ch01.py::"
                   "test_the_verdict_with_gpt2_tokens_windows_and_first_batch"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "1.1": TaskSpec(
        contract=Contract(
            pinned=(
                "`encode` splits with the setup cell's `TOKEN_PATTERN`, strips every piece, drops the empty ones "
                "and maps each token to its id in the given vocabulary; a token the vocabulary lacks gets the id "
                "the vocabulary gives `<|unk|>` (its ids need not be sorted, and `<|unk|>` need not be last); "
                "`<|endoftext|>` too, when the vocabulary lacks it. The given vocabulary is left unchanged.",
                "`decode` joins the tokens with single spaces and then removes the whitespace in front of "
                "`, . : ; ? ! \" ( ) '`.",
                "Round trips on sentences the vocabulary was not built from, on a text of spaces only and on the "
                "empty text (no ids, empty string).",
            ),
            free=("Which attributes the tokenizer keeps (the book's `str_to_int` and `int_to_str` are a "
                  "suggestion).",)),
        probes={"methods": kinds.Methods(tokenizer_arguments, unchanged=("vocab",))},
        hints=(_unknown_word_hint, _encode_hint, _decode_hint)),
    "1.2": TaskSpec(
        contract=Contract(
            pinned=(
                "The distinct tokens of the text, split as in 1.1, sorted, numbered from 0; then `<|endoftext|>` "
                "and `<|unk|>`, in that order, take the next two ids.",
                "The empty text gives the two special tokens alone.",
            ),
            free=("The order of the dict's entries: the dicts are compared as mappings.",)),
        probes={"vocab": kinds.Function(lambda probe: ([case_text(probe.case.args)], {}),
                                        outputs=(("vocab", "the returned vocabulary"),))},
        hints=(_vocab_ids_hint, _vocab_unsplit_hint)),
    "1.3": TaskSpec(
        contract=Contract(
            pinned=(
                "A `torch.utils.data.Dataset` over the text's ids from the given GPT-2 tokenizer; a window starts "
                "every `stride` tokens for as long as a full target fits.",
                "Item `i` is a pair of int64 tensors: `max_length` input ids and the same window shifted one token on.",
                "`len` is the number of windows, also when `stride` is larger than `max_length` and when exactly "
                "one window fits.",
            ),
            free=(
                "A text shorter than one window: an empty data set or an error, both pass (the book asserts).",
                "Whether the windows are made in `__init__` or when an item is read (the task text advises "
                "`__init__`, encoding the text once).",
                "A text holding `<|endoftext|>`: the checks' texts hold none, so encoding it as the special token "
                "(`allowed_special`, as the task advises for chapter 05's text) and refusing it both pass.",
            )),
        probes={"windows": kinds.Dataset(dataset_arguments, item_types=True, types_message=ITEM_TYPES_MESSAGE)},
        hints=(_dataset_length_hint, _window_hint)),
    "1.4": TaskSpec(
        contract=Contract(
            pinned=(
                "The signature's defaults (`batch_size=4`, `max_length=256`, `stride=128`, `shuffle=True`, "
                "`drop_last=True`): one case calls it with the text alone.",
                "Windows as in 1.3 over GPT-2 tokens, and every argument passed on: with `shuffle=False` the batches "
                "in order; `drop_last` decides whether a short last batch is kept.",
                "`num_workers` passed on too: the returned loader's own `num_workers` is compared (no batch is read "
                "from that loader, so no worker process starts). The signature names it, the book passes it, and a "
                "loader that drops it silently loads with one process.",
            ),
            free=(
                "The order of a shuffled loader: it is judged by its sampler's class, the shapes of its batches "
                "and the sorted set of its windows.",
            )),
        probes={"loader": kinds.Loader(loader_arguments)}),
    "1.5": TaskSpec(
        contract=Contract(
            pinned=(
                "Token embeddings of the ids plus position embeddings of positions `0 .. num_tokens - 1`, "
                "broadcast over the batch; gradients reach both tables.",
                "The position table may be longer than the sequence; the positions live on the ids' device.",
            )),
        probes={"forward": kinds.Function(embed_arguments, outputs=(("embedded", "the returned embeddings"),),
                                          tensors=True, grad_of="embedded")}),
}
