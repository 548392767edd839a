"""The grader's chapter module of chapter 01 (working with text data): its public and hidden
cases and its known mistakes."""
import functools
import re

import torch
from torch.utils.data import DataLoader

from gptcourse.data import read_text
from gptcourse.checking.records import Case
from gptcourse.tokenizer import get_encoding
from grader.chapters import GraderSpec
from grader.reference import reference_object
from grader.reference.ch01_text_data import TOKEN_PATTERN  # the notebook's setup cell, one source

DECODE_PATTERN = r'\s+([,.:;?!"()\'])'

# Sentences no vocabulary of the notebook was built from: punctuation of every kind the split
# knows, double dashes, quotes, apostrophes, several spaces, line breaks and tabs.
SENTENCES = [
    "The lighthouse keeper counted the ships: three at dawn, two at noon; none at night.",
    'She asked, "Is the tide coming in?" -- and nobody answered.',
    "It's a quiet town (population 412) with one bakery, one school and one long road!",
    "Rain again -- the third day in a row.\nThe river rose; the bridge held.",
    "He wrote letters_in_the_margin of every book he owned.",
    "Why would anyone paint a door   bright yellow? Because it was cheap.",
    "The recipe said: flour, water, salt.\tNothing else.",
    "'Not yet,' she said. 'The paint is still wet.'",
    "Two trains left the station (one late, one early) and met at the bridge.",
    "A map is not the territory; a word is not the thing!",
    "Numbers like 3.14 and 2,718 split in surprising places.",
    "Wait -- did the clock just stop? It did.",
    "They walked home slowly, talking about nothing at all.",
    "The painter looked at the canvas for a long time, then laughed.",
    "She paused--then smiled--and closed the sketchbook.",
]


@functools.lru_cache(maxsize=None)
def _verdict():
    return read_text("the-verdict")


def _vocab_of(text, shuffle_rng=None):
    """The reference vocabulary of `text`; with a generator, the same tokens with shuffled ids
    (so that <|unk|> is not the last id and the ids are not in sorted order)."""
    vocab = reference_object("1.2")(text)
    if shuffle_rng is None:
        return vocab
    ids = shuffle_rng.permutation(len(vocab))
    return {token: int(ids[i]) for i, token in enumerate(vocab)}


def _pick(rng, count):
    return [SENTENCES[i] for i in rng.choice(len(SENTENCES), size=count, replace=False)]


def _verdict_slice(rng, num_chars):
    start = int(rng.integers(0, len(_verdict()) - num_chars))
    return _verdict()[start:start + num_chars]


# ------------------------------------------------------------------------------------------
# Task 1.1: the tokenizer
# ------------------------------------------------------------------------------------------

def _tokenizer_case(rng, vocab, texts, label, decode_ids=0):
    """Encode each text, decode what came back (a round trip), and decode a few known ids."""
    calls = []
    for text in texts:
        calls.append({"method": "encode", "args": [text]})
        calls.append({"method": "decode", "args": [{"$result": len(calls) - 1}]})
    if decode_ids:
        known = sorted(vocab.values())
        calls.append({"method": "decode", "args": [[int(i) for i in rng.choice(known, size=decode_ids)]]})
    return Case("1.1", "methods", label, {"vocab": vocab, "calls": calls})


def _public_1_1(rng):
    known = SENTENCES[12] + " " + SENTENCES[0]
    return [
        _tokenizer_case(rng, _vocab_of(known), [SENTENCES[0], "The keeper laughed: no ships, no night!"],
                        "a vocabulary of two sentences; a known sentence, then one with unknown words",
                        decode_ids=6),
        _tokenizer_case(rng, _vocab_of(SENTENCES[1] + SENTENCES[7], rng), [SENTENCES[1], "'Is it wet?' -- she asked."],
                        "a vocabulary whose ids are shuffled; quotes, '?' and '--'"),
        _tokenizer_case(rng, _without_end_of_text(_vocab_of(SENTENCES[3])),
                        [SENTENCES[3] + " <|endoftext|> " + SENTENCES[3]],
                        "a vocabulary without <|endoftext|>; a text that holds it"),
    ]


def _without_end_of_text(vocab):
    """The vocabulary without <|endoftext|> (the ids stay as they were): that token is then unknown."""
    return {token: token_id for token, token_id in vocab.items() if token != "<|endoftext|>"}


def _hidden_1_1(rng):
    verdict = _vocab_of(_verdict())
    held_out = _pick(rng, 4)
    small = _vocab_of(" ".join(_pick(rng, 3)), rng)
    return [
        _tokenizer_case(rng, verdict, [_verdict_slice(rng, 160), held_out[0]],
                        "the-verdict's vocabulary (1132 entries); a passage of the-verdict, a new sentence",
                        decode_ids=8),
        _tokenizer_case(rng, small, held_out[1:] + ["  ", "", "Hello\n\n\tworld"],
                        "a small vocabulary with shuffled ids; new sentences, whitespace only, an empty text"),
        _tokenizer_case(rng, _vocab_of("a b c : ; , . ? ! \" ( ) ' -- _", rng), ["a: b; c, (a) 'b' \"c\" -- a_b?!"],
                        "a vocabulary of punctuation; every punctuation mark next to words"),
    ]


def _mistaken_tokenizer(split=TOKEN_PATTERN, keep_space=False, unknown="lookup", lowercase=False,
                       decode_pattern=DECODE_PATTERN, joiner=" ", renumber=False):
    """SimpleTokenizerV2 with one thing changed: a known mistake."""

    class SimpleTokenizerV2:
        def __init__(self, vocab):
            self.str_to_int = {s: i for i, s in enumerate(vocab)} if renumber else vocab
            self.int_to_str = ({i: s for i, s in enumerate(vocab)} if renumber == "both"
                               else {i: s for s, i in vocab.items()})

        def encode(self, text):
            text = text.lower() if lowercase else text
            pieces = re.split(split, text)
            tokens = [p for p in pieces if p] if keep_space else [p.strip() for p in pieces if p.strip()]
            if unknown == "skip":
                return [self.str_to_int[t] for t in tokens if t in self.str_to_int]
            unk = len(self.str_to_int) - 1 if unknown == "last" else self.str_to_int["<|unk|>"]
            return [self.str_to_int.get(t, unk) for t in tokens]

        def decode(self, ids):
            text = joiner.join(self.int_to_str[i] for i in ids)
            return re.sub(decode_pattern, r"\1", text) if decode_pattern else text

    return SimpleTokenizerV2


def _mistakes_1_1():
    return [
        ("decode keeps the space before punctuation: after joining with spaces, remove the spaces in front "
         "of , . : ; ? ! \" ( ) ' (re.sub(r'\\s+([,.:;?!\"()\\'])', r'\\1', text))",
         _mistaken_tokenizer(decode_pattern=None)),
        ("decode removes the space before , . ? ! \" ( ) ' but not before : and ; (the pattern of the first "
         "tokenizer version)", _mistaken_tokenizer(decode_pattern=r'\s+([,.?!"()\'])')),
        ("decode joins the tokens without spaces: join them with \" \" and then remove only the spaces "
         "before punctuation", _mistaken_tokenizer(joiner="")),
        ("the text is split on whitespace only, so punctuation stays attached to the words: split on "
         "TOKEN_PATTERN", _mistaken_tokenizer(split=r"(\s)")),
        ("the pattern has no capturing group (...), so re.split drops the punctuation instead of keeping "
         "it as tokens", _mistaken_tokenizer(split=r'[,.:;?_!"()\']|--|\s')),
        ("'--' is not split off: the pattern needs the alternative |--", _mistaken_tokenizer(split=r'([,.:;?_!"()\']|\s)')),
        ("whitespace pieces are kept as tokens: drop the pieces that are empty after .strip()",
         _mistaken_tokenizer(keep_space=True)),
        ("unknown words are dropped instead of becoming <|unk|>", _mistaken_tokenizer(unknown="skip")),
        ("the id of <|unk|> is taken to be the last one (len(vocab) - 1): look it up in the vocabulary "
         "instead, which need not be sorted", _mistaken_tokenizer(unknown="last")),
        ("the text is lower-cased: the vocabulary is case-sensitive", _mistaken_tokenizer(lowercase=True)),
        ("the tokens are numbered in the vocabulary's order (enumerate) instead of with the ids the vocabulary "
         "gives them: str_to_int is the vocabulary itself, and int_to_str its inverse, {i: s for s, i in "
         "vocab.items()}", _mistaken_tokenizer(renumber="both")),
        ("encode numbers the tokens in the vocabulary's order (enumerate) instead of using the ids the "
         "vocabulary gives them: str_to_int is the vocabulary itself", _mistaken_tokenizer(renumber=True)),
    ]


# ------------------------------------------------------------------------------------------
# Task 1.2: the vocabulary
# ------------------------------------------------------------------------------------------

def _vocab_case(label, text=None, text_of=None):
    args = {"text_of": text_of} if text_of else {"text": text}
    return Case("1.2", "vocab", label, args)


def _public_1_2(rng):
    return [
        _vocab_case("two sentences", text=SENTENCES[12] + "\n" + SENTENCES[13]),
        _vocab_case("a text with quotes, '--' and repeated words",
                    text=SENTENCES[1] + " " + SENTENCES[14] + " " + SENTENCES[11] + " " + SENTENCES[1]),
    ]


def _hidden_1_2(rng):
    return [
        _vocab_case("the-verdict (1132 entries)", text_of="the-verdict"),
        _vocab_case("a passage of the-verdict", text=_verdict_slice(rng, 1500)),
        _vocab_case("new sentences with every kind of punctuation", text="\n".join(_pick(rng, 6))),
        _vocab_case("an empty text (only the special tokens)", text=""),
    ]


def _mistaken_vocab(split=TOKEN_PATTERN, order="sorted", specials=("<|endoftext|>", "<|unk|>"),
                   specials_first=False, keep_space=False, lowercase=False, first_id=0, inverse=False):
    def build_vocab(text):
        text = text.lower() if lowercase else text
        pieces = re.split(split, text)
        tokens = [p for p in pieces if p] if keep_space else [p.strip() for p in pieces if p.strip()]
        if order == "sorted":
            tokens = sorted(set(tokens))
        elif order == "first_seen":
            tokens = list(dict.fromkeys(tokens))
        elif order == "all":
            tokens = sorted(tokens)
        elif order == "with_specials":
            tokens = sorted(set(tokens) | set(specials))
        if order != "with_specials":
            tokens = list(specials) + tokens if specials_first else tokens + list(specials)
        vocab = {}
        for token_id, token in enumerate(tokens, start=first_id):  # with duplicates a later id wins
            vocab[token] = token_id
        return {i: token for token, i in vocab.items()} if inverse else vocab
    return build_vocab


def _mistakes_1_2():
    return [
        ("the special tokens are missing: append '<|endoftext|>' and '<|unk|>' after the sorted tokens",
         _mistaken_vocab(specials=())),
        ("only '<|unk|>' is appended: '<|endoftext|>' comes first, then '<|unk|>'",
         _mistaken_vocab(specials=("<|unk|>",))),
        ("the special tokens are in the wrong order: '<|endoftext|>' first, then '<|unk|>'",
         _mistaken_vocab(specials=("<|unk|>", "<|endoftext|>"))),
        ("the special tokens come first: they are appended after the sorted tokens",
         _mistaken_vocab(specials_first=True)),
        ("the special tokens are sorted together with the others: sort the text's tokens first, then "
         "append the two special tokens", _mistaken_vocab(order="with_specials")),
        ("the tokens are not sorted (ids in order of first appearance): use sorted(set(tokens))",
         _mistaken_vocab(order="first_seen")),
        ("repeated tokens are not removed, so ids skip numbers: use sorted(set(tokens))",
         _mistaken_vocab(order="all")),
        ("whitespace pieces are kept as tokens: drop the pieces that are empty after .strip()",
         _mistaken_vocab(keep_space=True)),
        ("the text is split on whitespace only, so punctuation stays attached to the words",
         _mistaken_vocab(split=r"(\s)")),
        ("the pattern has no capturing group, so re.split drops the punctuation",
         _mistaken_vocab(split=r'[,.:;?_!"()\']|--|\s')),
        ("the text is lower-cased: the vocabulary is case-sensitive", _mistaken_vocab(lowercase=True)),
        ("the ids start at 1: they start at 0 (enumerate(tokens))", _mistaken_vocab(first_id=1)),
        ("the vocabulary maps ids to tokens: build_vocab returns {token: id}", _mistaken_vocab(inverse=True)),
    ]


# ------------------------------------------------------------------------------------------
# Task 1.3: the sliding-window dataset
# ------------------------------------------------------------------------------------------

def _dataset_case(label, text, max_length, stride, may_refuse=False):
    """Every item of the reference's dataset is read. may_refuse: the contract accepts an error as well
    as the reference's empty data set (a text shorter than one window)."""
    items = list(range(len(reference_object("1.3")(text, get_encoding(), max_length, stride))))
    args = {"text": text, "max_length": max_length, "stride": stride, "items": items}
    if may_refuse:
        args["may_refuse"] = True
    return Case("1.3", "windows", f"{label}, max_length={max_length}, stride={stride}", args)


def _public_1_3(rng):
    text = _verdict()[:180]
    return [
        _dataset_case("the start of the-verdict (41 tokens)", text, 4, 1),
        _dataset_case("the start of the-verdict (41 tokens)", text, 5, 5),
        _dataset_case("a text of 3 tokens, shorter than one window (an empty data set or an error)", "Too short.", 4, 4,
                      may_refuse=True),
    ]


def _hidden_1_3(rng):
    passage = _verdict_slice(rng, 300)
    tokens = len(get_encoding().encode(passage))
    return [
        _dataset_case("a passage of the-verdict", passage, int(rng.integers(3, 7)), 2),
        _dataset_case("a passage of the-verdict, stride larger than max_length", passage, 3, 7),
        _dataset_case("a passage of the-verdict, stride equal to max_length", passage, 6, 6),
        _dataset_case("a passage of the-verdict, exactly one window", passage, tokens - 1, 3),
        _dataset_case("a text shorter than one window (an empty data set or an error)", "Too short to train on.", 8, 8,
                      may_refuse=True),
        _dataset_case("a sentence", SENTENCES[int(rng.integers(len(SENTENCES)))], 2, 3),
    ]


def _mistaken_dataset(end_offset=0, target="shifted", step="stride", swap=False):
    base = reference_object("1.3")

    class GPTDatasetV1(base):
        def __init__(self, txt, tokenizer, max_length, stride):
            if swap:
                max_length, stride = stride, max_length
            self.input_ids, self.target_ids = [], []
            ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
            for i in range(0, len(ids) - max_length + end_offset, {"stride": stride, "one": 1}.get(step, max_length)):
                self.input_ids.append(torch.tensor(ids[i:i + max_length]))
                if target == "same":
                    self.target_ids.append(torch.tensor(ids[i:i + max_length]))
                elif target == "short":
                    self.target_ids.append(torch.tensor(ids[i + 1:i + max_length]))
                else:
                    self.target_ids.append(torch.tensor(ids[i + 1:i + max_length + 1]))

    return GPTDatasetV1


def _mistakes_1_3():
    return [
        ("the targets are the inputs themselves: they are the inputs shifted by one token, "
         "token_ids[i + 1:i + max_length + 1]", _mistaken_dataset(target="same")),
        ("the target windows are one token short: token_ids[i + 1:i + max_length + 1]",
         _mistaken_dataset(target="short")),
        ("the windows start at every token: they start every `stride` tokens (range(..., stride))",
         _mistaken_dataset(step="one")),
        ("stride is ignored: the windows start every max_length tokens instead of every `stride` tokens",
         _mistaken_dataset(step="max_length")),
        ("max_length and stride are swapped", _mistaken_dataset(swap=True)),
        ("the loop runs one window too far: the last target runs past the end of the text, "
         "range(0, len(token_ids) - max_length, stride)", _mistaken_dataset(end_offset=1)),
        ("the loop stops one token early and can miss the last window: "
         "range(0, len(token_ids) - max_length, stride)", _mistaken_dataset(end_offset=-1)),
    ]


# ------------------------------------------------------------------------------------------
# Task 1.4: the data loader
# ------------------------------------------------------------------------------------------

def _loader_case(label, kwargs, text=None, text_of="the-verdict", **record):
    args = {"text": text} if text is not None else {"text_of": text_of}
    args.update(kwargs=kwargs, **record)
    shown = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "the default arguments"
    return Case("1.4", "loader", f"{label}, {shown}", args)


def _default_loader_case():
    """The signature's defaults; last, since a loader with other defaults passes the cases
    that name their arguments."""
    return _loader_case("the-verdict", {}, batches=0, sampler=True, batch_shapes=True)


def _public_1_4(rng):
    return [
        _loader_case("the-verdict", {"batch_size": 8, "max_length": 4, "stride": 4, "shuffle": False, "drop_last": True},
                     sampler=True),
        _loader_case("the start of the-verdict, shuffled", {"batch_size": 3, "max_length": 4, "stride": 2,
                                                             "shuffle": True, "drop_last": False},
                     text=_verdict()[:120], batches=0, sampler=True, windows=True),
        _default_loader_case(),
        _workers_case("the start of the-verdict", 2),
    ]


def _workers_case(label, num_workers, text_length=120):
    """num_workers passed on: the loader's own num_workers is compared, and no batch is read, so
    no worker process starts."""
    kwargs = {"batch_size": 2, "max_length": 4, "stride": 4, "shuffle": False, "drop_last": True,
              "num_workers": num_workers}
    return _loader_case(label, kwargs, text=_verdict()[:text_length], batches=0, num_workers=True)


def _hidden_1_4(rng):
    passage = _verdict_slice(rng, 400)
    batch_size = int(rng.integers(3, 6))
    return [
        _loader_case("a passage of the-verdict", {"batch_size": batch_size, "max_length": 5, "stride": 3,
                                                  "shuffle": False, "drop_last": False},
                     text=passage, batches=99, sampler=True),
        _loader_case("a passage of the-verdict", {"batch_size": batch_size, "max_length": 5, "stride": 3,
                                                  "shuffle": False, "drop_last": True},
                     text=passage, batches=99),
        _loader_case("a passage of the-verdict, shuffled", {"batch_size": 4, "max_length": 6, "stride": 9,
                                                            "shuffle": True, "drop_last": False},
                     text=passage, batches=0, sampler=True, windows=True, batch_shapes=True),
        _workers_case("the start of the-verdict", int(rng.integers(1, 5)), text_length=200),
    ]


def _mistaken_loader(defaults=None, force=None, swap=False, batch_of_window=False):
    """create_dataloader_v1 with other defaults, an argument not passed on, or sizes swapped."""
    signature = dict(batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True, num_workers=0)
    signature.update(defaults or {})

    def create_dataloader_v1(txt, **kwargs):
        settings = {**signature, **kwargs, **(force or {})}
        window, step = settings["max_length"], settings["stride"]
        if swap:
            window, step = step, window
        dataset = reference_object("1.3")(txt, get_encoding(), window, step)
        batch_size = settings["max_length"] if batch_of_window else settings["batch_size"]
        # Only the num_workers case passes num_workers > 0, and it reads no batch: no worker starts.
        return DataLoader(dataset, batch_size=batch_size, shuffle=settings["shuffle"],
                          drop_last=settings["drop_last"], num_workers=settings["num_workers"])

    return create_dataloader_v1


def _mistakes_1_4():
    # The defaults first: a student with other defaults passes every case that names its
    # arguments, so the default case is where the two kinds of mistake look alike.
    return [
        ("the default arguments differ from the signature: drop_last=True by default",
         _mistaken_loader(defaults={"drop_last": False})),
        ("the default arguments differ from the signature: max_length=256 and stride=128 by default",
         _mistaken_loader(defaults={"max_length": 128, "stride": 256})),
        ("the default arguments differ from the signature: batch_size=4 by default",
         _mistaken_loader(defaults={"batch_size": 8})),
        ("the default arguments differ from the signature: shuffle=True by default",
         _mistaken_loader(defaults={"shuffle": False})),
        ("drop_last is not passed on to the DataLoader (it always drops the last, incomplete batch)",
         _mistaken_loader(force={"drop_last": True})),
        ("drop_last is not passed on to the DataLoader (it never drops the last, incomplete batch)",
         _mistaken_loader(force={"drop_last": False})),
        ("batch_size is not passed on to the DataLoader", _mistaken_loader(force={"batch_size": 1})),
        ("num_workers is not passed on to the DataLoader: DataLoader(..., num_workers=num_workers)",
         _mistaken_loader(force={"num_workers": 0})),
        ("the DataLoader gets batch_size=max_length: a batch holds batch_size windows",
         _mistaken_loader(batch_of_window=True)),
        ("max_length and stride are swapped when the dataset is made", _mistaken_loader(swap=True)),
    ]


# ------------------------------------------------------------------------------------------
# Task 1.5: token and position embeddings
# ------------------------------------------------------------------------------------------

def _embed_case(rng, batch, tokens, vocab=12, dim=3, context=8, dtype="float32"):
    arrays = {
        "token_ids": rng.integers(0, vocab, size=(batch, tokens)),
        "state/tok_emb.weight": rng.normal(size=(vocab, dim)),
        "state/pos_emb.weight": rng.normal(size=(context, dim)),
        "grad_seed": rng.normal(size=(batch, tokens, dim)),
    }
    label = (f"a batch of {batch} x {tokens} token ids, vocabulary {vocab}, {context} positions, "
             f"embedding dim {dim}, {dtype}")
    return Case("1.5", "forward", label, {}, arrays, dtype)


def _public_1_5(rng):
    return [_embed_case(rng, 2, 4, vocab=6, context=6), _embed_case(rng, 1, 3, vocab=7, dim=4, context=5)]


def _hidden_1_5(rng):
    return [
        _embed_case(rng, 3, 5, vocab=20, dim=4, context=5),
        _embed_case(rng, 1, 6, vocab=9, dim=2, context=10, dtype="float64"),
        _embed_case(rng, 4, 1, vocab=5, dim=3, context=3),
        _embed_case(rng, 2, 7, vocab=30, dim=5, context=16),
    ]


def _embed_without_positions(token_ids, tok_emb, pos_emb):
    return tok_emb(token_ids)


def _embed_positions_from_ids(token_ids, tok_emb, pos_emb):
    return tok_emb(token_ids) + pos_emb(token_ids)


def _embed_positions_from_one(token_ids, tok_emb, pos_emb):
    positions = torch.arange(1, token_ids.shape[-1] + 1, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)


def _embed_positions_of_batch(token_ids, tok_emb, pos_emb):
    return tok_emb(token_ids) + pos_emb(torch.arange(token_ids.shape[0], device=token_ids.device))


def _embed_product(token_ids, tok_emb, pos_emb):
    positions = torch.arange(token_ids.shape[-1], device=token_ids.device)
    return tok_emb(token_ids) * pos_emb(positions)


def _mistakes_1_5():
    return [
        ("the position embeddings are missing: add pos_emb(torch.arange(num_tokens))", _embed_without_positions),
        ("the position table is looked up with the token ids: look it up with the positions "
         "torch.arange(num_tokens)", _embed_positions_from_ids),
        ("the positions start at 1: they are 0 .. num_tokens - 1, torch.arange(num_tokens)",
         _embed_positions_from_one),
        ("the positions count the batch (token_ids.shape[0]): they count the tokens, token_ids.shape[-1]",
         _embed_positions_of_batch),
        ("the two embeddings are multiplied: they are added", _embed_product),
    ]


# ------------------------------------------------------------------------------------------


def _extras_1_3(case):
    if case.args.get("may_refuse"):
        # A text too short for one window: refusing it (the book asserts len(token_ids) > max_length)
        # is as right as the reference's empty data set.
        return {"internals/alternatives": [{"refused": True}]}
    return {}


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "1.1": GraderSpec(
        public=_public_1_1,
        hidden=_hidden_1_1,
        mistakes=_mistakes_1_1),
    "1.2": GraderSpec(
        public=_public_1_2,
        hidden=_hidden_1_2,
        mistakes=_mistakes_1_2),
    "1.3": GraderSpec(
        public=_public_1_3,
        hidden=_hidden_1_3,
        mistakes=_mistakes_1_3,
        extras=_extras_1_3),
    "1.4": GraderSpec(
        public=_public_1_4,
        hidden=_hidden_1_4,
        mistakes=_mistakes_1_4),
    "1.5": GraderSpec(
        public=_public_1_5,
        hidden=_hidden_1_5,
        mistakes=_mistakes_1_5),
}
