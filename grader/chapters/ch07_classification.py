"""The grader's chapter module of chapter 07 (fine-tuning for classification): its public and hidden
cases and its known mistakes.

- 7.1: small DataFrames of made-up messages, handed over as columns in the case's args (each
  text unique, so a row is known by its content), with an index that is not 0, 1, 2, ... (as
  after balancing). create_balanced_dataset is judged by its columns, the count per label and
  its rows as a set (the order of the result is free); random_split by the sizes of the three
  parts first (the clearest message: rounding, rows lost), then each part's rows in order. Both
  record the input frame after the call. Split sizes are chosen where int() and round() differ
  and where the test part is not int(len * test_frac). The contract's "split by fraction" also
  reads as cumulative cuts, int(len * train_frac) and int(len * (train_frac + validation_frac))
  (np.split's idiom): that reading is an accepted alternative (expectation_extras). Seeds are
  pandas' random_state=123: pandas draws with NumPy's legacy RandomState, so
  RandomState(123).permutation is the same shuffle and passes; torch.randperm or default_rng do
  not.
- 7.2: CSV files with commas, quotes, line breaks and non-ASCII text, written into the worker's
  private folder (ctx.scratch); max_length None, shorter than some messages, longer than all;
  another pad_token_id; a single message. Recorded: the length, the first item's ids (an integer
  tensor), every item as plain ids and an integer label (an int, a NumPy integer or a 0-d integer
  tensor are the same label), then a batch of every item through a DataLoader (it must stack, and
  the labels must come out int64 for cross_entropy).
- 7.3: ToyGPT (public: GPTModel's layout with tiny blocks) and small GPTModels of 1 to 3 blocks
  (hidden), some already partly frozen. Recorded: whether another model came back instead,
  requires_grad of every parameter by name, the new out_head (nn.Linear, in/out features, bias),
  the other parameters removed or changed, and the output shape.
- 7.4: ToyClassifier (token vectors looked up by id % 64, so GPT-2's ids cost nothing, position
  embeddings, and a running mean over the positions, so the first and the last token's outputs
  differ as in a GPT) and a small GPTModel with a 2- or 3-class head; labels are the reference's
  own predictions with a few flipped, so the accuracy is neither 0 nor 1 and the first token's
  predictions give another one.
- 7.5: ToyClassifier and a small GPTModel classifier in float64; the ids of the model's last call
  are compared (its forward wrapped to note them: cropping to min(max_length, context length),
  padding at the end, pad_token_id), then the label string. The device pass catches batches and
  the message tensor left on the CPU.
"""
import numpy as np
import torch

from gptcourse.checking.chapters.toys import ToyClassifier, ToyGPT
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.casekit import module_weights
from grader.grading.expectations import seeded_probe
from grader.reference import reference_object, reference_objects

HAM_WORDS = ("ok", "see", "you", "at", "home", "later", "lunch", "tomorrow", "mum", "thanks", "love", "gonna",
             "be", "late", "sorry", "call", "me", "when", "free", "the", "bus", "is", "running", "what", "time",
             "dinner", "tonight", "haha", "sure", "café", "x")
SPAM_WORDS = ("WINNER", "claim", "your", "prize", "now", "FREE", "txt", "WIN", "to", "80086", "£1000", "cash",
              "urgent", "call", "09061701461", "reply", "STOP", "award", "guaranteed", "mobile", "ringtone",
              "offer", "valid", "12hrs", "only", "T&C's", "apply", "won", "a", "£2000", "bonus")
PUNCTUATION = ("", "", "", ",", ".", "!", "?", "...")


def _message(rng, label, words=None, number=None):
    """A made-up SMS of the label's kind; `number` makes it unique."""
    vocabulary = SPAM_WORDS if label in ("spam", 1) else HAM_WORDS
    count = int(words if words is not None else rng.integers(3, 12))
    picked = [vocabulary[i] + PUNCTUATION[int(rng.integers(len(PUNCTUATION)))]
              for i in rng.integers(0, len(vocabulary), size=count)]
    if number is not None:
        picked.insert(int(rng.integers(0, count + 1)), f"#{number}")
    text = " ".join(picked)
    return text[0].upper() + text[1:] if label in ("ham", 0) else text


def _frame_args(rng, labels, index=None):
    """args["df"]: the columns Label and Text, and the index (shuffled numbers by default)."""
    n = len(labels)
    texts = [_message(rng, label, number=i) for i, label in enumerate(labels)]
    index = [int(i) for i in (index if index is not None else rng.permutation(n) * 3 + 7)]
    return {"Label": list(labels), "Text": texts, "index": index}


# ------------------------------------------------------------------------------------------
# 7.1 Balancing and splitting
# ------------------------------------------------------------------------------------------

def _balance_case(rng, ham, spam, index=None, label=None):
    labels = ["ham"] * ham + ["spam"] * spam
    labels = [labels[i] for i in rng.permutation(len(labels))]
    args = {"df": _frame_args(rng, labels, index)}
    what = label or f"a DataFrame of {ham} ham and {spam} spam messages, mixed, with a shuffled index"
    return Case("7.1", "balance", what, args)


def _split_case(rng, n, train_frac, validation_frac, labels="numbers", label=None):
    for fraction in (train_frac, validation_frac):
        exact = n * fraction
        assert exact == round(exact) or abs(exact - round(exact)) > 1e-6, "a size at the edge of float rounding"
    values = [int(v) for v in rng.integers(0, 2, size=n)]
    if labels == "words":
        values = ["spam" if v else "ham" for v in values]
    args = {"df": _frame_args(rng, values), "train_frac": train_frac, "validation_frac": validation_frac}
    what = label or (f"{n} rows ({labels == 'numbers' and 'labels 0/1' or 'labels ham/spam'}, a shuffled index), "
                     f"train_frac={train_frac}, validation_frac={validation_frac}")
    return Case("7.1", "split", what, args)


def _cumulative_split(df, train_frac, validation_frac):
    """The other reading of "split by fraction": both cuts from the cumulative fractions."""
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = int(len(df) * (train_frac + validation_frac))
    return df[:train_end], df[train_end:validation_end], df[validation_end:]


# ------------------------------------------------------------------------------------------
# 7.2 SpamDataset
# ------------------------------------------------------------------------------------------

ODD_TEXTS = ('Call me, "now" please', "Line one\nline two", "Ünïcödé and emoji 😀 £5", "Commas, commas, commas",
             "  leading and trailing spaces  ", "A 'quoted' word; and a semicolon")


def _dataset_case(rng, messages, label, odd=0, **keywords):
    labels = [int(v) for v in rng.integers(0, 2, size=messages)]
    rows = [[lab, _message(rng, lab, words=int(rng.integers(1, 14)))] for lab in labels]
    for i, text in zip(rng.choice(messages, size=min(odd, messages), replace=False), rng.permutation(ODD_TEXTS)):
        rows[int(i)][1] = str(text)
    args = {"rows": rows, "filename": f"messages_{int(rng.integers(1000))}.csv", **keywords}
    settings = ", ".join(f"{k}={v}" for k, v in keywords.items()) or "max_length and pad_token_id left out"
    return Case("7.2", "dataset", f"{label}: a CSV file of {messages} message{'s' * (messages > 1)}, {settings}", args)


def _dataset_case_cutting_some(rng, messages, label, odd=0, **keywords):
    """A case whose max_length lies strictly between the shortest and the longest message."""
    from gptcourse import get_encoding
    tokenizer = get_encoding()
    for _ in range(50):
        case = _dataset_case(rng, messages, label, odd, max_length=0, **keywords)
        lengths = sorted(len(tokenizer.encode(text)) for _, text in case.args["rows"])
        if lengths[-1] - lengths[0] >= 3:
            case.args["max_length"] = int(rng.integers(lengths[0] + 1, lengths[-1]))
            case.label = case.label.replace("max_length=0", f"max_length={case.args['max_length']}")
            return case
    raise RuntimeError("no messages of different enough lengths were drawn")


# ------------------------------------------------------------------------------------------
# 7.3 add_classification_head
# ------------------------------------------------------------------------------------------

def _gpt_cfg(vocab_size=30, context_length=8, emb_dim=8, n_heads=2, n_layers=2, drop_rate=0.0, qkv_bias=False):
    return {"vocab_size": vocab_size, "context_length": context_length, "emb_dim": emb_dim, "n_heads": n_heads,
            "n_layers": n_layers, "drop_rate": drop_rate, "qkv_bias": qkv_bias}


def _head_model(model_args):
    """The model a 7.3 case hands over, as the reference builds it (for its weights)."""
    if model_args["model"] == "gpt":
        return reference_object("4.5")(dict(model_args["cfg"]))
    return ToyGPT(model_args["vocab_size"], model_args["context_length"], model_args["emb_dim"],
                  model_args["n_layers"])


def _head_case(rng, model_args, num_classes, frozen_before=(), label=""):
    """Random weights for every parameter but the old head (layer norms included, so that one
    made anew differs from the one handed over)."""
    vocab = model_args["cfg"]["vocab_size"] if model_args["model"] == "gpt" else model_args["vocab_size"]
    args = dict(model_args, num_classes=num_classes, frozen_before=list(frozen_before))
    arrays = {"ids": rng.integers(0, vocab, size=(2, 5))}
    arrays.update({key: value for key, value in module_weights(_head_model(model_args), rng).items()
                   if not key.startswith("state/out_head.")})
    if model_args["model"] == "gpt":
        cfg = model_args["cfg"]
        what = f"a GPTModel of {cfg['n_layers']} block{'s' * (cfg['n_layers'] > 1)} (emb_dim={cfg['emb_dim']})"
    else:
        what = (f"a model laid out like GPTModel, {model_args['n_layers']} blocks (emb_dim={model_args['emb_dim']})")
    frozen = f", {', '.join(frozen_before)} already frozen" if frozen_before else ""
    return Case("7.3", "head", f"{what}, num_classes={num_classes}{frozen}{label}", args, arrays)


def _toy_gpt(vocab_size=20, context_length=8, emb_dim=6, n_layers=3):
    return {"model": "toy_gpt", "vocab_size": vocab_size, "context_length": context_length, "emb_dim": emb_dim,
            "n_layers": n_layers}


# ------------------------------------------------------------------------------------------
# 7.4 and 7.5: classifiers
# ------------------------------------------------------------------------------------------

def _toy(context_length=12, emb_dim=6, num_classes=2):
    return {"model": "toy", "context_length": context_length, "emb_dim": emb_dim, "num_classes": num_classes}


def _gpt_classifier(num_classes=2, **cfg):
    return {"model": "gpt", "cfg": _gpt_cfg(**cfg), "classifier": True, "num_classes": num_classes}


def _classifier(args, dtype="float32"):
    """The case's model as the reference sees it (with the case's weights copied in later)."""
    if args["model"] == "toy":
        return ToyClassifier(args["context_length"], args["emb_dim"], args["num_classes"])
    model = reference_object("4.5")(dict(args["cfg"]))
    model.out_head = torch.nn.Linear(args["cfg"]["emb_dim"], args["num_classes"])
    return model


def _weights(args, rng):
    """Random weights, a larger head; layer norms as after training (scale near 1, small shift):
    shifts as large as the weights add the same vector to every message and most draws then
    predict one class whatever the message."""
    weights = module_weights(_classifier(args), rng, prefix="model.")
    for key, value in weights.items():
        if key.endswith(".scale"):
            weights[key] = 1.0 + rng.normal(scale=0.2, size=value.shape)
        elif key.endswith(".shift"):
            weights[key] = rng.normal(scale=0.1, size=value.shape)
    return {key: value * 2.0 if "out_head" in key else value for key, value in weights.items()}


def _model_label(args):
    if args["model"] == "toy":
        return f"a small test classifier ({args['num_classes']} classes, context {args['context_length']})"
    cfg = args["cfg"]
    return (f"a GPTModel classifier ({cfg['n_layers']} block{'s' * (cfg['n_layers'] > 1)}, {args['num_classes']} "
            f"classes, context {cfg['context_length']})")


def _predictions(args, arrays, dtype, position=-1):
    """The classes the case's model predicts for its inputs, from the token at `position`."""
    model = _classifier(args)
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(torch.tensor(arrays[f"state/model.{name}"]))
        model.to(getattr(torch, dtype)).eval()
        logits = model(torch.tensor(arrays["inputs"]))
    return logits[:, position, :].argmax(dim=-1).numpy()


def _labelled(rng, args, arrays, dtype, flips, batch_size=None, num_batches=None):
    """Labels: the model's own predictions with `flips` of them changed, redrawn (other ids, and
    every fifth try other weights: some draws predict one class whatever the message) until the
    first token's predictions differ from the last one's and, for an accuracy case (batch_size
    given), every classic misreading of the accuracy gives another number than the right one and
    than each other (_readings_apart), so that the message names the mistake that was made."""
    vocab = args["cfg"]["vocab_size"] if args["model"] == "gpt" else 50257
    for attempt in range(200):
        if attempt and attempt % 5 == 0:
            arrays.update(_weights(args, rng))
        last = _predictions(args, arrays, dtype)
        first = _predictions(args, arrays, dtype, position=0)
        labels = last.copy()
        for i in rng.choice(len(labels), size=flips, replace=False):
            labels[i] = (labels[i] + 1 + int(rng.integers(args["num_classes"] - 1))) % args["num_classes"]
        apart = (first == labels).sum() != (last == labels).sum() if batch_size is None else \
            _readings_apart(first == labels, last == labels, batch_size, num_batches)
        if (first != last).any() and apart:
            arrays["labels"] = labels.astype(np.int64)
            return arrays
        arrays["inputs"] = rng.integers(0, vocab, size=arrays["inputs"].shape)
    raise RuntimeError("no inputs that tell the accuracy's misreadings apart were drawn")


def _readings_apart(first_right, last_right, batch_size, num_batches):
    """Whether the accuracy and its known misreadings (the first token's predictions, the mean of the
    batches' accuracies, one batch too many, num_batches ignored) give pairwise different numbers,
    except where two readings are the same computation here (one batch too many when there is none)."""
    total = -(-len(last_right) // batch_size)
    used = total if num_batches is None else min(num_batches, total)

    def reading(right, batches, per_batch=False):
        chunks = [right[b * batch_size:(b + 1) * batch_size] for b in range(batches)]
        value = np.mean([c.mean() for c in chunks]) if per_batch else np.concatenate(chunks).mean()
        same_as = (right is last_right, batches, per_batch and len({len(c) for c in chunks}) > 1)
        return same_as, float(value)

    readings = dict([reading(last_right, used), reading(first_right, used), reading(last_right, used, per_batch=True),
                     reading(last_right, min(used + 1, total)), reading(last_right, total)])
    values = list(readings.values())
    return all(abs(a - b) > 1e-9 for i, a in enumerate(values) for b in values[i + 1:])


def _loss_case(rng, model_args, batch, tokens, dtype="float32"):
    vocab = model_args["cfg"]["vocab_size"] if model_args["model"] == "gpt" else 50257
    arrays = {"inputs": rng.integers(0, vocab, size=(batch, tokens)),
              "labels": rng.integers(0, model_args["num_classes"], size=batch), "grad_seed": np.array(1.0)}
    arrays.update(_weights(model_args, rng))
    label = f"a batch of {batch} messages of {tokens} tokens on the CPU, {_model_label(model_args)}, {dtype}"
    return Case("7.4", "loss", label, dict(model_args), arrays, dtype)


def _accuracy_case(rng, model_args, messages, tokens, batch_size, num_batches="all", flips=2):
    vocab = model_args["cfg"]["vocab_size"] if model_args["model"] == "gpt" else 50257
    args = dict(model_args, batch_size=batch_size)
    if num_batches != "all":
        args["num_batches"] = num_batches
    arrays = {"inputs": rng.integers(0, vocab, size=(messages, tokens))}
    arrays.update(_weights(model_args, rng))
    _labelled(rng, model_args, arrays, "float32", flips, batch_size, None if num_batches == "all" else num_batches)
    batches = -(-messages // batch_size)
    what = "no num_batches" if num_batches == "all" else f"num_batches={num_batches}"
    label = (f"a loader of {batches} batches ({messages} messages of {tokens} tokens, batch_size={batch_size}, "
             f"the last one {'partial' if messages % batch_size else 'full'}), {what}, {_model_label(model_args)}")
    return Case("7.4", "accuracy", label, args, arrays)


def _classify_case(rng, model_args, text, max_length, label, **keywords):
    args = dict(model_args, text=text, max_length=max_length, **keywords)
    arrays = _weights(model_args, rng)
    settings = "".join(f", {k}={v}" for k, v in keywords.items())
    return Case("7.5", "classify", f"{label}, max_length={max_length}{settings}, {_model_label(model_args)}", args,
                arrays, "float64")


def _tokens(text):
    from gptcourse import get_encoding
    return len(get_encoding().encode(text))


def _long_message(rng, tokens_at_least):
    text = ""
    while _tokens(text) < tokens_at_least:
        text = (text + " " + _message(rng, "spam", words=6)).strip()
    return text


# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


def _extras_7_1(case):
    """random_split: the cumulative reading of the fractions is an accepted alternative."""
    if case.kind == "split":
        names = dict(reference_objects("7.1"), random_split=_cumulative_split)
        return {"internals/alternatives": [seeded_probe(names, case)]}
    return {}


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

def _mistakes_7_1():
    import pandas as pd

    names = reference_objects("7.1")

    def unseeded_ham(df):
        spam = df[df["Label"] == "spam"]
        return pd.concat([df[df["Label"] == "ham"].sample(len(spam), random_state=42), spam])

    def first_ham_rows(df):
        spam = df[df["Label"] == "spam"]
        return pd.concat([df[df["Label"] == "ham"].head(len(spam)), spam])

    def sampled_from_whole_frame(df):
        spam = df[df["Label"] == "spam"]
        return pd.concat([df.sample(len(spam), random_state=123), spam])

    def rounded_split(df, train_frac, validation_frac):
        df = df.sample(frac=1, random_state=123).reset_index(drop=True)
        train_end = round(len(df) * train_frac)
        validation_end = train_end + round(len(df) * validation_frac)
        return df[:train_end], df[train_end:validation_end], df[validation_end:]

    def test_by_fraction(df, train_frac, validation_frac):
        df = df.sample(frac=1, random_state=123).reset_index(drop=True)
        train_end = int(len(df) * train_frac)
        validation_end = train_end + int(len(df) * validation_frac)
        test_end = validation_end + int(len(df) * (1 - train_frac - validation_frac))
        return df[:train_end], df[train_end:validation_end], df[validation_end:test_end]

    def not_shuffled(df, train_frac, validation_frac):
        df = df.reset_index(drop=True)
        train_end = int(len(df) * train_frac)
        validation_end = train_end + int(len(df) * validation_frac)
        return df[:train_end], df[train_end:validation_end], df[validation_end:]

    def torch_shuffle(df, train_frac, validation_frac):
        order = torch.randperm(len(df), generator=torch.Generator().manual_seed(123)).tolist()
        df = df.iloc[order].reset_index(drop=True)
        train_end = int(len(df) * train_frac)
        validation_end = train_end + int(len(df) * validation_frac)
        return df[:train_end], df[train_end:validation_end], df[validation_end:]

    return [
        ("the ham rows are drawn with another seed: .sample(num_spam, random_state=123)",
         dict(names, create_balanced_dataset=unseeded_ham)),
        ("the first ham rows are taken instead of a seeded random sample: .sample(num_spam, random_state=123)",
         dict(names, create_balanced_dataset=first_ham_rows)),
        ("the sample is drawn from every row, spam included: sample from the ham rows only",
         dict(names, create_balanced_dataset=sampled_from_whole_frame)),
        ("the sizes are rounded with round(): int() rounds down, int(len(df) * train_frac)",
         dict(names, random_split=rounded_split)),
        ("the test part is cut to int(len(df) * test fraction) rows and loses the rest: it takes every row after "
         "the validation part, df[validation_end:]", dict(names, random_split=test_by_fraction)),
        ("the rows are not shuffled before the split: df.sample(frac=1, random_state=123) first",
         dict(names, random_split=not_shuffled)),
        ("the rows are shuffled with torch, not with pandas' df.sample(frac=1, random_state=123): the same seed "
         "gives another order", dict(names, random_split=torch_shuffle)),
    ]


def _mistakes_7_2():
    base = reference_object("7.2")

    class PaddedAtStart(base):
        def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
            super().__init__(csv_file, tokenizer, max_length, pad_token_id)
            self.encoded_texts = [[t for t in ids if t != pad_token_id] for ids in self.encoded_texts]
            self.encoded_texts = [[pad_token_id] * (self.max_length - len(ids)) + ids for ids in self.encoded_texts]

    class KeepsLastTokens(base):
        def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
            import pandas as pd
            self.data = pd.read_csv(csv_file)
            encoded = [tokenizer.encode(text) for text in self.data["Text"]]
            self.max_length = max_length or max(len(ids) for ids in encoded)
            encoded = [ids[-self.max_length:] for ids in encoded]
            self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in encoded]

    class FixedPad(base):
        def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
            super().__init__(csv_file, tokenizer, max_length, 50256)

    class NoCut(base):
        def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
            import pandas as pd
            self.data = pd.read_csv(csv_file)
            encoded = [tokenizer.encode(text) for text in self.data["Text"]]
            self.max_length = max_length or max(len(ids) for ids in encoded)
            self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in encoded]

    return [
        ("the padding is at the start: pad at the end", PaddedAtStart),
        ("longer messages keep their last tokens: keep the first max_length, ids[:max_length]", KeepsLastTokens),
        ("the padding ignores pad_token_id and always uses 50256", FixedPad),
        ("messages longer than max_length are not cut", NoCut),
    ]


def _mistakes_7_3():
    def head_frozen(model, num_classes, emb_dim):
        model.out_head = torch.nn.Linear(emb_dim, num_classes)
        for param in model.parameters():
            param.requires_grad = False
        for param in model.trf_blocks[-1].parameters():
            param.requires_grad = True
        for param in model.final_norm.parameters():
            param.requires_grad = True
        return model

    def first_block(model, num_classes, emb_dim):
        for param in model.parameters():
            param.requires_grad = False
        model.out_head = torch.nn.Linear(emb_dim, num_classes)
        for param in list(model.trf_blocks[0].parameters()) + list(model.final_norm.parameters()):
            param.requires_grad = True
        return model

    def norm_frozen(model, num_classes, emb_dim):
        for param in model.parameters():
            param.requires_grad = False
        model.out_head = torch.nn.Linear(emb_dim, num_classes)
        for param in model.trf_blocks[-1].parameters():
            param.requires_grad = True
        return model

    def nothing_frozen(model, num_classes, emb_dim):
        model.out_head = torch.nn.Linear(emb_dim, num_classes)
        return model

    return [
        ("the head is replaced before freezing, so the new head is frozen too", head_frozen),
        ("the first block is unfrozen instead of the last: model.trf_blocks[-1]", first_block),
        ("final_norm stays frozen: unfreeze its parameters too", norm_frozen),
        ("nothing is frozen: only the head, the last block and final_norm should train; set requires_grad = False "
         "on every parameter first (model.requires_grad = False only adds an attribute and freezes nothing)",
         nothing_frozen),
    ]


def _mistakes_7_4():
    names = reference_objects("7.4")

    def first_token_loss(input_batch, target_batch, model, device):
        logits = model(input_batch.to(device))[:, 0, :]
        return torch.nn.functional.cross_entropy(logits, target_batch.to(device))

    def softmax_first_loss(input_batch, target_batch, model, device):
        logits = model(input_batch.to(device))[:, -1, :]
        return torch.nn.functional.cross_entropy(torch.softmax(logits, dim=-1), target_batch.to(device))

    def mean_pooled_loss(input_batch, target_batch, model, device):
        logits = model(input_batch.to(device)).mean(dim=1)
        return torch.nn.functional.cross_entropy(logits, target_batch.to(device))

    def accuracy_with(position=-1, per_batch=False, percent=False, every_batch=False, one_late=False):
        def calc_accuracy_loader(data_loader, model, device, num_batches=None):
            model.eval()
            n = len(data_loader) if num_batches is None or every_batch else min(num_batches, len(data_loader))
            correct, seen, rates = 0, 0, []
            for i, (x, y) in enumerate(data_loader):
                if i >= n + int(one_late):  # one_late: `if i > num_batches: break`, one batch too many
                    break
                with torch.no_grad():
                    predicted = model(x.to(device))[:, position, :].argmax(dim=-1)
                right = (predicted == y.to(device)).sum().item()
                correct, seen = correct + right, seen + len(y)
                rates.append(right / len(y))
            value = sum(rates) / len(rates) if per_batch else correct / seen
            return 100 * value if percent else value
        return calc_accuracy_loader

    return [
        ("the loss uses the first token's logits: the last one, [:, -1, :], has seen the whole message",
         dict(names, calc_loss_batch_cls=first_token_loss)),
        ("the loss averages the logits over all positions: use the last token's, [:, -1, :]",
         dict(names, calc_loss_batch_cls=mean_pooled_loss)),
        ("the logits go through softmax before cross_entropy, which applies the softmax itself: give it the raw "
         "logits of the last token", dict(names, calc_loss_batch_cls=softmax_first_loss)),
        ("the accuracy uses the first token's logits: the last one, [:, -1, :], has seen the whole message",
         dict(names, calc_accuracy_loader=accuracy_with(position=0))),
        ("the accuracy is a percentage: return the fraction, between 0 and 1",
         dict(names, calc_accuracy_loader=accuracy_with(percent=True))),
        ("the accuracy is not divided by the number of messages seen: a mean of the batches' accuracies (or a "
         "division by num_batches * batch_size) counts a smaller last batch as a full one; add up the messages of "
         "the batches used and divide the number right by that total",
         dict(names, calc_accuracy_loader=accuracy_with(per_batch=True))),
        ("the loop stops one batch late (if i > num_batches: break), using num_batches + 1 batches: batches "
         "0 .. num_batches - 1 are the first num_batches, so stop when i >= num_batches",
         dict(names, calc_accuracy_loader=accuracy_with(one_late=True))),
        ("num_batches is ignored: use only the first min(num_batches, len(data_loader)) batches",
         dict(names, calc_accuracy_loader=accuracy_with(every_batch=True))),
    ]


def _classify_with(pad_at_start=False, crop_to_context=True, keep_last=False, labels=("not spam", "spam")):
    def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
        model.eval()
        ids = tokenizer.encode(text)
        length = min(max_length, model.pos_emb.weight.shape[0]) if crop_to_context else max_length
        ids = ids[-length:] if keep_last else ids[:length]
        padding = [pad_token_id] * (length - len(ids))
        ids = padding + ids if pad_at_start else ids + padding
        with torch.no_grad():
            logits = model(torch.tensor(ids, device=device).unsqueeze(0))[:, -1, :]
        return labels[int(logits.argmax(dim=-1).item())]
    return classify_text


def _mistakes_7_5():
    return [
        ("the label is the other one: class 1 is spam (\"spam\" when the argmax is 1), and the prediction comes "
         "from the LAST token's logits, model(x)[:, -1, :]", _classify_with(labels=("spam", "not spam"))),
        ("the padding is at the start: pad at the end", _classify_with(pad_at_start=True)),
        ("a long message keeps its last tokens: keep the first ones, ids[:length]", _classify_with(keep_last=True)),
        ("the ids are not cut to the model's context length: use min(max_length, model.pos_emb.weight.shape[0])",
         _classify_with(crop_to_context=False)),
    ]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "7.1": GraderSpec(
        public=lambda rng: [
            _balance_case(rng, 14, 5),
            _split_case(rng, 37, 0.7, 0.1),
        ],
        hidden=lambda rng: [
            _balance_case(rng, 31, 8),
            _balance_case(rng, 6, 6, label="a DataFrame of 6 ham and 6 spam messages (already balanced)"),
            _balance_case(rng, 17, 1, index=list(range(18)),
                          label="a DataFrame of 17 ham messages and 1 spam message, index 0, 1, 2, ..."),
            _split_case(rng, 37, 0.7, 0.1),
            _split_case(rng, 23, 0.6, 0.25, labels="words"),
            _split_case(rng, 10, 0.5, 0.5, label="10 rows, train_frac=0.5, validation_frac=0.5: no test rows"),
            _split_case(rng, 61, 0.7, 0.1),
        ],
        mistakes=_mistakes_7_1,
        extras=_extras_7_1),
    "7.2": GraderSpec(
        public=lambda rng: [
            _dataset_case(rng, 5, "padding to the longest message", odd=1),
            _dataset_case_cutting_some(rng, 6, "cutting and padding"),
            _dataset_case(rng, 3, "max_length longer than every message, another pad_token_id", max_length=30,
                          pad_token_id=0),
        ],
        hidden=lambda rng: [
            _dataset_case(rng, 7, "padding to the longest message", odd=3),
            _dataset_case_cutting_some(rng, 8, "cutting and padding", odd=2, pad_token_id=0),
            _dataset_case(rng, 5, "max_length longer than every message", odd=1, max_length=40),
            _dataset_case(rng, 1, "a single message", pad_token_id=7),
            _dataset_case(rng, 4, "one token per message", odd=0, max_length=1),
        ],
        mistakes=_mistakes_7_2),
    "7.3": GraderSpec(
        public=lambda rng: [
            _head_case(rng, _toy_gpt(), 2),
            _head_case(rng, _toy_gpt(n_layers=2, emb_dim=4), 3, frozen_before=("tok_emb", "final_norm")),
        ],
        hidden=lambda rng: [
            _head_case(rng, {"model": "gpt", "cfg": _gpt_cfg()}, 2),
            _head_case(rng, {"model": "gpt", "cfg": _gpt_cfg(n_layers=1, emb_dim=6)}, 4,
                       label=" (the last block is also the first)"),
            _head_case(rng, {"model": "gpt", "cfg": _gpt_cfg(n_layers=3, qkv_bias=True, drop_rate=0.1)}, 2,
                       frozen_before=("trf_blocks.2.att", "final_norm", "pos_emb")),
            _head_case(rng, _toy_gpt(n_layers=4), 5, frozen_before=("tok_emb", "pos_emb", "trf_blocks", "final_norm",
                                                                     "out_head")),
        ],
        mistakes=_mistakes_7_3),
    "7.4": GraderSpec(
        public=lambda rng: [
            _loss_case(rng, _toy(), 3, 5),
            _accuracy_case(rng, _toy(), 7, 6, 3),
            # One batch of three: ignoring num_batches (3 batches) and stopping one batch late (2) differ.
            _accuracy_case(rng, _toy(num_classes=3), 8, 4, 3, num_batches=1),
            _accuracy_case(rng, _toy(), 5, 4, 2, num_batches=10),
        ],
        hidden=lambda rng: [
            _loss_case(rng, _toy(num_classes=3), 4, 7),
            _loss_case(rng, _toy(), 1, 3, dtype="float64"),
            _loss_case(rng, _gpt_classifier(), 3, 6),
            _accuracy_case(rng, _toy(), 9, 5, 4),
            _accuracy_case(rng, _toy(), 6, 5, 2, num_batches=10),
            _accuracy_case(rng, _toy(), 10, 5, 3, num_batches=None, flips=3),
            _accuracy_case(rng, _gpt_classifier(num_classes=3), 7, 6, 2, num_batches=3),
        ],
        mistakes=_mistakes_7_4),
    "7.5": GraderSpec(
        public=lambda rng: [
            _classify_case(rng, _toy(context_length=16), "Ok lor, see you at home", 10, "a short message, padded"),
            _classify_case(rng, _toy(context_length=16),
                           "WINNER!! As a valued network customer you have been selected to receive a £900 prize reward! "
                           "To claim call 09061701461.", 12, "a long message, cut"),
            _classify_case(rng, _toy(context_length=8), "Sorry, I'll call later", 20,
                           "max_length longer than the model's context length of 8"),
            _classify_case(rng, _toy(context_length=12), "Free entry in 2 a wkly comp", 12, "another pad_token_id",
                           pad_token_id=3),
        ],
        hidden=lambda rng: [
            _classify_case(rng, _toy(context_length=20), _message(rng, "ham", words=4), 15, "a short message, padded"),
            _classify_case(rng, _toy(context_length=30), _long_message(rng, 25), 10, "a long message, cut"),
            _classify_case(rng, _toy(context_length=10), _long_message(rng, 20), 25,
                           "a long message, max_length longer than the model's context length of 10"),
            _classify_case(rng, _toy(context_length=12), "Café at 7? 😀", 9, "non-ASCII text", pad_token_id=0),
            _classify_case(rng, _gpt_classifier(context_length=10, vocab_size=50257), _message(rng, "spam", words=3),
                           8, "a short message, padded, GPT-2's vocabulary", pad_token_id=5),
        ],
        mistakes=_mistakes_7_5),
}
