"""Chapter 07, fine-tuning for classification: its tasks, their probes and the hints.

- 7.1 works on pandas DataFrames handed over as columns (a case's args): the rows a function
  returns are compared with the seeded reference's, row by row where order matters (the
  splits) and as a set where it does not (the balanced frame).
- 7.2 reads a CSV file that the probe writes into the context's scratch folder (the worker's
  private folder when grading).
- 7.3 edits a model in place: which parameters require gradients, by name, the new head's
  shape, and that nothing else changed. The self-check uses ToyGPT, a GPT's layout at a tiny
  cost; the hidden cases a small GPTModel.
- 7.4 and 7.5 run ToyClassifier, whose output at each position sees the tokens up to it (so
  the last and the first token's logits differ), with token vectors looked up by the id
  modulo a small table (any vocabulary, GPT-2's too, costs nothing). The model notes the ids
  it is given, so classify_text's cropping and padding are compared directly.
"""
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.chapters.toys import ToyClassifier, ToyGPT
from gptcourse.checking.contract import Contract, ReferenceValue
from gptcourse.checking.probes import ProbeFailure
from gptcourse.tokenizer import GPT2_FILES

CHAPTER = "07_classification"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = GPT2_FILES


COLUMNS = ("Label", "Text")


# ------------------------------------------------------------------------------------------
# The model a case describes (the toys: gptcourse.checking.chapters.toys)
# ------------------------------------------------------------------------------------------

def build_model(args, gpt_model=None):
    """The model a case describes, before its weights are loaded: args["model"] is "toy"
    (ToyClassifier), "toy_gpt" (ToyGPT) or "gpt" (GPTModel(args["cfg"]), with a new
    Linear(emb_dim, num_classes) head when args has num_classes: a classifier)."""
    kind = args["model"]
    if kind == "toy":
        return ToyClassifier(args["context_length"], args["emb_dim"], args["num_classes"])
    if kind == "toy_gpt":
        return ToyGPT(args["vocab_size"], args["context_length"], args["emb_dim"], args["n_layers"])
    model = gpt_model(dict(args["cfg"]))
    if args.get("classifier"):
        model.out_head = nn.Linear(args["cfg"]["emb_dim"], args["num_classes"])
    return model


def _model(probe, name="model"):
    """The case's model with the case's weights, on the case's device and dtype, in eval mode."""
    gpt_model = probe.name("GPTModel") if probe.case.args["model"] == "gpt" else None
    return probe.module_input(name, build_model(probe.case.args, gpt_model))


# ------------------------------------------------------------------------------------------
# 7.1 DataFrames
# ------------------------------------------------------------------------------------------

def _frame(probe):
    """The case's DataFrame: args["df"] holds its columns and its index."""
    import pandas as pd

    columns = probe.case.args["df"]
    return pd.DataFrame({column: list(columns[column]) for column in COLUMNS}, index=list(columns["index"]))


def _snapshot(df):
    """A DataFrame as plain data: its columns, index and rows."""
    return {"columns": [str(c) for c in df.columns], "index": [_plain_cell(v) for v in df.index],
            "rows": _rows(df)}


def _plain_cell(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


def _rows(df):
    """Every row as [Label, Text], in order (other columns are reported through `columns`)."""
    present = [c for c in COLUMNS if c in df.columns]
    return [[_plain_cell(v) for v in row] for row in df[present].itertuples(index=False, name=None)]


def _require_frame(value, what):
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        advice = (": np.split and np.array_split hand back NumPy arrays with recent pandas, so cut the frame "
                  "itself, df[a:b] or df.iloc[a:b]") if isinstance(value, np.ndarray) else ""
        raise ProbeFailure(f"{what} should be a pandas DataFrame, got {type(value).__name__}{advice}")
    return value


def record_frame_after(probe):
    """The input frame as the call left it, recorded first: a changed input explains what follows.
    (Not an after/ key: the generic message for those speaks of tensors.)"""
    probe.record_value("df_after", _snapshot(probe.kept["frame"]), "the DataFrame passed in, after the call")


def balance_arguments(probe):
    probe.kept["frame"] = _frame(probe)
    probe.kept["frame_before"] = _snapshot(probe.kept["frame"])
    return [probe.kept["frame"]], {}


def record_balanced(probe):
    """The input frame as the call left it, then counts per class, the columns and the rows as
    a set (sorted: the order is free)."""
    record_frame_after(probe)
    df = _require_frame(probe.result, "the value create_balanced_dataset returns")
    probe.record_value("columns", [str(c) for c in df.columns], "the columns of the returned DataFrame")
    labels = df["Label"].tolist() if "Label" in df.columns else []
    counts = {str(label): labels.count(label) for label in sorted(set(labels), key=str)}
    probe.record_value("counts", counts, "the number of rows per label")
    probe.record_value("rows", sorted(_rows(df), key=lambda row: [str(v) for v in row]),
                   "the rows kept (in any order)")


def split_arguments(probe):
    probe.kept["frame"] = _frame(probe)
    args = probe.case.args
    return [probe.kept["frame"], args["train_frac"], args["validation_frac"]], {}


SPLITS = ("train", "validation", "test")


def record_split(probe):
    """The input frame as the call left it, the sizes of the three parts (the clearest message),
    then their rows in order."""
    record_frame_after(probe)
    parts = probe.result
    if not isinstance(parts, (tuple, list)) or len(parts) != 3:
        raise ProbeFailure(f"random_split should return three DataFrames (train_df, validation_df, test_df), got "
                           f"{type(parts).__name__}" + (f" of length {len(parts)}" if isinstance(parts, (tuple, list))
                                                        else ""))
    frames = [_require_frame(part, f"the {name} part random_split returns") for name, part in zip(SPLITS, parts)]
    probe.record_value("sizes", [len(frame) for frame in frames], "the sizes of the train, validation and test parts")
    probe.record_value("columns", [[str(c) for c in frame.columns] for frame in frames],
                   "the columns of the three parts")
    for name, frame in zip(SPLITS, frames):
        probe.record_value(f"rows/{name}", _rows(frame), f"the rows of the {name} part, in order")


# ------------------------------------------------------------------------------------------
# 7.2 SpamDataset
# ------------------------------------------------------------------------------------------

def dataset_arguments(probe):
    """SpamDataset(csv_file, tokenizer[, max_length][, pad_token_id]) on a CSV file written into
    the scratch folder (columns Label and Text, no index column, as the notebook writes them)."""
    import pandas as pd

    args = probe.case.args
    path = Path(probe.ctx.scratch) / args["filename"]
    pd.DataFrame({"Label": [row[0] for row in args["rows"]], "Text": [row[1] for row in args["rows"]]}) \
        .to_csv(path, index=False)
    keywords = {key: args[key] for key in ("max_length", "pad_token_id") if key in args}
    probe.kept["counting_tokenizer"] = _CountingTokenizer(probe.ctx.tokenizer)
    return [str(path), probe.kept["counting_tokenizer"]], keywords


class _CountingTokenizer:
    """The GPT-2 tokenizer, counting the calls of its encode methods: the contract's SpamDataset
    pre-tokenizes, so reading its items must not encode anything again."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer
        self.calls = 0

    def __repr__(self):  # as feedback shows the arguments: the tokenizer it wraps
        return repr(self._tokenizer)

    def __getattr__(self, name):
        value = getattr(self._tokenizer, name)
        if not (name.startswith("encode") and callable(value)):
            return value

        def counted(*args, **kwargs):
            self.calls += 1
            return value(*args, **kwargs)
        return counted


def _describe_ids(value):
    if isinstance(value, torch.Tensor):
        kind = "integer" if not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool) \
            else str(value.dtype).replace("torch.", "")
        return f"a {value.dim()}-d {kind} tensor"
    return type(value).__name__


def _label_value(value):
    """A label as an int when it is an integer of any kind (int, NumPy, 0-d integer tensor)."""
    if isinstance(value, torch.Tensor) and value.dim() == 0 and not value.is_floating_point() \
            and value.dtype != torch.bool:
        return int(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    return f"a {type(value).__name__}: {value!r}"[:80]


def record_dataset(probe):
    """len(dataset), what an item is made of, every item, then a batch of all of them as a
    DataLoader stacks it."""
    dataset = probe.result
    if not isinstance(dataset, torch.utils.data.Dataset):
        raise ProbeFailure(f"{type(dataset).__name__} should be a subclass of torch.utils.data.Dataset")
    encoded_in_init = probe.kept["counting_tokenizer"].calls
    probe.step = "calling len() of your dataset"
    probe.record_value("len", len(dataset), "len(dataset)")
    items = []
    for i in range(len(probe.case.args["rows"])):
        probe.step = f"reading item {i} of your dataset"
        item = dataset[i]
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ProbeFailure(f"dataset[{i}] should be a pair (token_ids, label), got {type(item).__name__}"
                               + (f" of length {len(item)}" if isinstance(item, (tuple, list)) else ""))
        items.append(item)
        if i == 0:
            probe.record_value("ids_type", _describe_ids(item[0]), "what dataset[0]'s token ids are")
        ids = item[0].tolist() if isinstance(item[0], torch.Tensor) else item[0]
        probe.record_value(f"item/{i}", {"token_ids": ids, "label": _label_value(item[1])}, f"dataset[{i}]")
    probe.step = "stacking every item into one batch with a DataLoader"
    inputs, labels = next(iter(DataLoader(dataset, batch_size=len(items), shuffle=False)))
    probe.record_value("batch", {"token_ids": f"{tuple(inputs.shape)} {str(inputs.dtype).replace('torch.', '')}",
                             "labels": f"{tuple(labels.shape)} {str(labels.dtype).replace('torch.', '')}"},
                   "the shapes and dtypes of a batch of every item")
    probe.record_value("encoded_while_reading", probe.kept["counting_tokenizer"].calls - encoded_in_init,
                   "the tokenizer calls made while reading items")


# ------------------------------------------------------------------------------------------
# 7.3 add_classification_head
# ------------------------------------------------------------------------------------------

def head_arguments(probe):
    """add_classification_head(model, num_classes, emb_dim) on the case's model, with the case's
    weights (state/<name>: a re-created layer then shows, even a layer norm), some of whose
    parameters may already be frozen (args["frozen_before"]: name prefixes)."""
    args = probe.case.args
    gpt_model = probe.name("GPTModel") if args["model"] == "gpt" else None
    probe.step = "building the model the test passes in"
    model = build_model(args, gpt_model).to(probe.dtype)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if f"state/{name}" in probe.case.arrays:
                param.copy_(torch.as_tensor(np.asarray(probe.case.arrays[f"state/{name}"])))
    for name, param in model.named_parameters():
        if any(name.startswith(prefix) for prefix in args.get("frozen_before", ())):
            param.requires_grad = False
    probe.kept["model"] = model
    probe.kept["values_before"] = {name: param.detach().clone() for name, param in model.named_parameters()}
    emb_dim = args["cfg"]["emb_dim"] if args["model"] == "gpt" else args["emb_dim"]
    return [model, args["num_classes"], emb_dim], {}


def describe_head(head):
    if isinstance(head, nn.Linear):
        return {"type": "nn.Linear", "in_features": head.in_features, "out_features": head.out_features,
                "bias": head.bias is not None}
    return {"type": type(head).__name__}


def record_head(probe):
    """Whether a copy came back instead, the new head, the parameters whose values changed, which
    parameters require gradients (by name), and the shape of the logits: in that order, so that
    a head or a layer made anew is named as such before the gradients it changes."""
    model = probe.kept["model"]
    probe.record_value("returned_copy", isinstance(probe.result, nn.Module) and probe.result is not model,
                   "whether the function returned another model than the one it was given")
    params = dict(model.named_parameters())
    probe.record_value("head", describe_head(getattr(model, "out_head", None)), "model.out_head")
    changed = [name for name, before in probe.kept["values_before"].items()
               if not name.startswith("out_head.") and (name not in params or not torch.equal(params[name].detach(),
                                                                                              before))]
    probe.record_value("changed", changed, "the parameters (other than out_head) removed or changed")
    probe.record_value("trainable", {name: bool(param.requires_grad) for name, param in params.items()},
                   "which parameters require gradients")
    probe.step = "running the model after your function changed it"
    ids = probe.tensor("ids")
    model.to(probe.device).eval()  # the new head is made on the CPU; the notebook moves the model afterwards
    with torch.no_grad():
        logits = model(ids)
    probe.record_value("logits_shape", list(logits.shape), "the shape of the model's output")


# ------------------------------------------------------------------------------------------
# 7.4 loss and accuracy
# ------------------------------------------------------------------------------------------

def loss_arguments(probe):
    """calc_loss_batch_cls(input_batch, target_batch, model, device): batches on the CPU."""
    model = _model(probe)
    return [probe.cpu_input("inputs", "input_batch"), probe.cpu_input("labels", "target_batch"), model, probe.case.device], {}


def accuracy_arguments(probe):
    """calc_accuracy_loader(data_loader, model, device[, num_batches]): a loader on the CPU, the
    model in train mode (see _watched_model)."""
    args = probe.case.args
    dataset = TensorDataset(probe.cpu_input("inputs"), probe.cpu_input("labels"))
    loader = DataLoader(dataset, batch_size=args["batch_size"], shuffle=False)
    model = _watched_model(probe)
    keywords = {"num_batches": args["num_batches"]} if "num_batches" in args else {}
    return [loader, model, probe.case.device], keywords


# ------------------------------------------------------------------------------------------
# 7.5 classify_text
# ------------------------------------------------------------------------------------------

def classify_arguments(probe):
    """classify_text(text, model, tokenizer, device, max_length[, pad_token_id]); the model is in
    train mode and notes its calls (see _watched_model)."""
    args = probe.case.args
    model = _watched_model(probe)
    keywords = {"pad_token_id": args["pad_token_id"]} if "pad_token_id" in args else {}
    return [args["text"], model, probe.ctx.tokenizer, probe.case.device, args["max_length"]], keywords


def _watched_model(probe):
    """The case's model handed over in train mode, as it is right after training, with its calls
    noted in probe.kept["model_calls"]: evaluating (model.eval(), no gradients) is the function's own job."""
    model = _model(probe)
    model.train()
    probe.kept["model_calls"] = _record_calls(model)
    return model


def _record_calls(model):
    """A list that gets (token ids, model.training, gradients enabled) of every call of the model,
    model(x) or model.forward(x) alike (an instance attribute comes before the class's forward in
    both)."""
    seen = []
    forward = model.forward

    def recording_forward(in_idx, *args, **kwargs):
        seen.append((in_idx, model.training, torch.is_grad_enabled()))
        return forward(in_idx, *args, **kwargs)

    model.forward = recording_forward
    return seen


def record_evaluation_mode(probe):
    """How many of the model's calls ran in train mode, and with gradients (the contract: none)."""
    calls = probe.kept["model_calls"]
    probe.record_value("model_calls_in_train_mode", sum(bool(training) for _, training, _ in calls),
                   "the model calls made in train mode")
    probe.record_value("model_calls_with_grad", sum(bool(grad) for _, _, grad in calls),
                   "the model calls made with gradients enabled")


def record_accuracy(probe):
    """The mode of the model's calls (a model left in train mode gives other predictions with
    dropout), then the returned accuracy."""
    record_evaluation_mode(probe)
    probe.record_value("accuracy", kinds.as_number(probe.result), "the returned accuracy")


def record_model_input(probe):
    """The mode of the model's calls, then the token ids of its last call (the case checks cropping
    and padding with them), then the returned label."""
    if not probe.kept["model_calls"]:
        raise ProbeFailure("classify_text never called the model")
    record_evaluation_mode(probe)
    ids = probe.kept["model_calls"][-1][0]
    if isinstance(ids, torch.Tensor) and ids.dim() == 2 and ids.shape[0] == 1:
        probe.record_value("model_input", ids[0].tolist(), "the token ids the model was given")
    else:
        shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
        probe.record_value("model_input", f"a batch of shape {shape}", "the token ids the model was given")
    probe.record_value("label", probe.result, "the returned label")


KEY_NAMES = {
    "columns": "The columns of the returned DataFrame(s)",
    "counts": "The number of rows per label",
    "rows": "The rows of the balanced DataFrame",
    "sizes": "The sizes of the train, validation and test parts",
    "rows/train": "The rows of the training part, in order",
    "rows/validation": "The rows of the validation part, in order",
    "rows/test": "The rows of the test part, in order",
    "df_after": "The DataFrame passed in, after the call",
    "len": "len(dataset)",
    "ids_type": "What an item's token ids are",
    "batch": "A batch of every item, as a DataLoader stacks it",
    "returned_copy": "Whether the model passed in was changed in place",
    "trainable": "Which parameters require gradients",
    "head": "model.out_head",
    "changed": "The parameters (other than out_head) removed or changed",
    "logits_shape": "The shape of the model's output",
    "loss": "The returned loss",
    "accuracy": "The returned accuracy",
    "model_calls_in_train_mode": "Model calls made in train mode",
    "encoded_while_reading": "Calls of the tokenizer while reading items (after __init__)",
    "model_calls_with_grad": "Model calls made with gradients enabled",
    "model_input": "The token ids the model was given",
    "label": "The returned label",
}

ERROR_HINTS = [
    (r"KeyError: '(label|text|labels|texts|v1|v2)'",
     "the columns are named Label and Text, with capitals: df[\"Label\"] and df[\"Text\"]", ("7.1", "7.2")),
    (r"Cannot take a larger sample than population when 'replace=False'",
     "sample() was asked for more rows than it has: draw num_spam rows from the ham rows only, "
     "df[df[\"Label\"] == \"ham\"].sample(num_spam, random_state=123)", ("7.1",)),
    (r"stack expects each tensor to be equal size|each element in list of batch should be of equal size",
     "the items have different lengths, so a DataLoader cannot stack them: pad every message with pad_token_id "
     "up to one common length (the longest message, or max_length), after cutting longer ones", ("7.2",)),
    (r"(expected str, bytes or os\.PathLike object|Invalid file path or buffer object type)",
     "SpamDataset gets the path of a CSV file (csv_file) and reads it itself: pd.read_csv(csv_file)", ("7.2",)),
    (r"index -?\d+ is out of (range|bounds)|IndexError",
     "the last transformer block is model.trf_blocks[-1]: the number of blocks differs between models (1 or 2 in "
     "the tests, 12 in GPT-2), so don't write the block number out", ("7.3",)),
    (r"mat1 and mat2 shapes cannot be multiplied",
     "the new head takes the emb_dim features of each token to num_classes scores: nn.Linear(emb_dim, "
     "num_classes), in that order", ("7.3",)),
    (r"Expected input batch_size \(\d+\) to match target batch_size",
     "cross_entropy got the logits of every position but one label per message: keep the last position only, "
     "model(input_batch)[:, -1, :], of shape (batch, num_classes), against target_batch of shape (batch,)",
     ("7.4",)),
    (r"StopIteration|list index out of range",
     "the loader ran out of batches: num_batches may be larger than the loader, so use "
     "min(num_batches, len(data_loader)) batches and loop over the loader itself (for ... in data_loader)",
     ("7.4",)),
    (r"ZeroDivisionError",
     "no message was counted: count the messages of every batch you use (predicted.shape[0]) and divide the "
     "number right by that total", ("7.4",)),
    (r"index out of range in self",
     "the model got more tokens than its context length: use min(max_length, model.pos_emb.weight.shape[0]) "
     "tokens, cut and padded to that length", ("7.5",)),
    (r"'NoneType' object cannot be interpreted as an integer|unsupported operand type\(s\) for -: 'NoneType'",
     "max_length is a number of tokens here: the test calls classify_text with max_length given", ("7.5",)),
]


def _balance_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if case.kind != "balance":
        return ""
    if key == "counts" and isinstance(have, dict) and isinstance(want, dict):
        if set(have) != set(want):
            return (f"the labels of the balanced frame are {sorted(have)}, expected {sorted(want)}: keep the labels "
                    f"as given (mapping ham and spam to 0 and 1 is a later step, outside this function)")
        if have.get("spam", 0) < want.get("spam", 0):
            return "some spam rows are missing: keep every spam row and sample only the ham rows"
        return (f"the balanced frame has {have} rows per label, expected {want}: as many ham rows as there are spam "
                f"rows, and every spam row")
    if key == "rows":
        return ("the right number of rows per label, but other ham rows than the seeded draw: sample the ham rows "
                "with .sample(num_spam, random_state=123), on the DataFrame of the ham rows only (the draw depends "
                "on the frame it is made from)")
    if key == "columns":
        return "return the rows with their columns Label and Text, and no other column"
    return ""


def _split_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    args = case.args
    if case.kind != "split":
        return ""
    if key == "sizes" and isinstance(have, list) and isinstance(want, list) and len(have) == 3:
        total = len(case.args["df"]["index"])
        if sum(have) < total and have[:2] == want[:2]:
            return (f"the three parts hold {sum(have)} of the {total} rows: the test part takes every row after "
                    f"the validation part, df[validation_end:], so that none is lost to rounding")
        if sum(have) < total:
            short = ", ".join(f"the {name} part {size} rows (expected {size_wanted})"
                              for name, size, size_wanted in zip(SPLITS, have, want) if size != size_wanted)
            return (f"the three parts hold {sum(have)} of the {total} rows, {short}: cut the shuffled frame at "
                    f"train_end and validation_end, df[:train_end], df[train_end:validation_end] and "
                    f"df[validation_end:], so that every row is in exactly one part")
        if sum(have) > total:
            return f"the three parts hold {sum(have)} rows, more than the {total} given: the parts must not overlap"
        if sorted(have) == sorted(want):
            return (f"parts of {have} rows, expected {want}: the right sizes in another order; return "
                    f"(train_df, validation_df, test_df), in that order")
        return (f"parts of {have} rows, expected {want}: the training part has int(len(df) * train_frac) = "
                f"int({total} * {args['train_frac']}) rows (int() rounds down), the validation part "
                f"int(len(df) * validation_frac) rows after it, and the test part the rest")
    if key.startswith("rows/") and isinstance(have, list) and isinstance(want, list):
        if sorted(map(str, have)) == sorted(map(str, want)):
            return (f"the {key[5:]} part holds the right rows in another order: shuffle once, with "
                    f"df.sample(frac=1, random_state=123), and cut the shuffled frame without reordering it")
        return ("other rows than the seeded shuffle gives: shuffle all rows with df.sample(frac=1, random_state=123) "
                "(not torch.randperm, and not another seed), reset the index, then cut by position")
    if key == "columns":
        return "return the parts with their columns Label and Text, and no other column"
    return ""


def _frame_changed_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "df_after":
        return ""
    what = "the DataFrame passed in was changed"
    if isinstance(have, dict) and isinstance(want, dict):
        if have.get("columns") != want.get("columns"):
            what = f"the DataFrame passed in now has the columns {have.get('columns')}, not {want.get('columns')}"
        elif have.get("index") != want.get("index"):
            what = "the index of the DataFrame passed in was changed (reset_index(inplace=True) or similar)"
        elif have.get("rows") != want.get("rows"):
            what = "the rows of the DataFrame passed in were changed"
    return (f"{what}: leave the caller's frame as it was and work on new frames (sample, concat and boolean "
            f"indexing return new ones, df.copy() makes one): don't assign into df or use inplace=True on it")


def _dataset_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    args = case.args
    if key == "len":
        return (f"len(dataset) is {have}, expected {want}: one message per row of the CSV file, whose first line "
                f"holds the column names (pd.read_csv(csv_file) reads it as such: no header=None), len(self.data)")
    if key == "ids_type":
        return "an item's token ids must be a tensor of integers: torch.tensor(ids, dtype=torch.long)"
    if key == "encoded_while_reading":
        return ("the messages are encoded again while the items are read: encode every message once, in "
                "__init__, and keep the padded ids there, so that reading an item costs nothing in every epoch")
    if key == "batch":
        return ("a DataLoader must stack the items into token ids (batch, length) of integers and labels (batch,) "
                "of integers (torch.long): give the label as an int or a 0-d torch.long tensor")
    if not key.startswith("item/") or not isinstance(have, dict) or not isinstance(want, dict):
        return ""
    ids, want_ids = have.get("token_ids"), want.get("token_ids")
    label = have.get("label")
    if isinstance(label, str) and label.startswith("a ") and not isinstance(want.get("label"), str):
        return (f"the label must be an integer, a Python int or a 0-d torch.long tensor (cross_entropy takes class "
                f"numbers), got {label}: int(label) or torch.tensor(label, dtype=torch.long)")
    if label != want.get("label") and ids == want_ids:
        return f"the label is {label!r}, expected {want.get('label')!r}: read it from the Label column"
    if not isinstance(ids, list) or not isinstance(want_ids, list):
        return ""
    pad = args.get("pad_token_id", 50256)
    if not _same_start([t for t in ids if t != pad], [t for t in want_ids if t != pad]):
        return ("other token ids than the message's: encode the text of the row, from the Text column, with "
                "tokenizer.encode(text), keep the first max_length ids and pad at the end with pad_token_id")
    if len(ids) != len(want_ids):
        if args.get("max_length") is None:
            return (f"{len(ids)} token ids, expected {len(want_ids)}: with max_length=None every message is padded "
                    f"to the longest message of the file, in tokens")
        return (f"{len(ids)} token ids, expected {len(want_ids)}: with max_length={args['max_length']} every message "
                f"has exactly max_length tokens, longer ones cut and shorter ones padded")
    if ids[:1] == [pad] and want_ids[:1] != [pad] and want_ids[-1:] == [pad]:
        return "the padding is at the start: pad at the end, ids + [pad_token_id] * (length - len(ids))"
    if pad != 50256 and 50256 in ids and 50256 not in want_ids:
        return f"padded with 50256 instead of pad_token_id={pad}: use the pad_token_id given"
    return ("other token ids: encode the Text of the row with tokenizer.encode(text), keep the first max_length "
            "ids and pad at the end with pad_token_id")


def _same_start(ids, other):
    """Whether one list of ids starts the other (a cut or a padded message has the right content)."""
    shorter = min(len(ids), len(other))
    return ids[:shorter] == other[:shorter]


def _trainable_names(values):
    return sorted(name for name, trainable in values.items() if trainable) if isinstance(values, dict) else []


def _head_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key == "returned_copy":
        return ("your function returned another model and left the one it was given as it was: change the model "
                "passed in, in place (and return it)")
    if key == "trainable" and isinstance(have, dict) and isinstance(want, dict):
        heads = [name for name in want if name.startswith("out_head.")]
        if heads and all(have.get(name) is False for name in heads):
            return "the new head is frozen: freeze everything first, then create the new out_head, which is trainable"
        if all(have.values()):
            return ("nothing is frozen: first set requires_grad = False on every parameter of the model (a loop "
                    "over model.parameters(), or model.requires_grad_(False); model.requires_grad = False only "
                    "adds an attribute to the module and freezes nothing)")
        n_layers = case.args["n_layers"] if case.args["model"] == "toy_gpt" else case.args["cfg"]["n_layers"]
        last = f"trf_blocks.{n_layers - 1}."
        block_names = [n for n in want if n.startswith(last)]
        if block_names and not all(have.get(n) for n in block_names):
            return (f"the last transformer block (trf_blocks[-1], here {last[:-1]}) must be trainable: unfreeze its "
                    f"parameters")
        norm = [n for n in want if n.startswith("final_norm.")]
        if norm and not all(have.get(n) for n in norm):
            return "final_norm must be trainable: unfreeze its parameters (its scale and shift)"
        extra = [n for n in _trainable_names(have) if n not in _trainable_names(want)]
        if extra:
            return (f"{extra[0]} requires gradients but should be frozen: only out_head, the last block "
                    f"(trf_blocks[-1]) and final_norm are trained")
        return ""
    if key == "head" and isinstance(have, dict) and isinstance(want, dict):
        if have.get("type") != want.get("type"):
            return f"out_head must be a single nn.Linear(emb_dim, num_classes), got {have.get('type')}"
        if have.get("in_features") == want.get("out_features") and have.get("out_features") == want.get("in_features"):
            return "nn.Linear's arguments are (in_features, out_features): nn.Linear(emb_dim, num_classes)"
        if not have.get("bias"):
            return "the head has no bias: nn.Linear(emb_dim, num_classes) keeps its default bias=True"
        return (f"the head maps {have.get('in_features')} features to {have.get('out_features')}, expected "
                f"nn.Linear(emb_dim={want.get('in_features')}, num_classes={want.get('out_features')})")
    if key == "changed" and isinstance(have, list) and have:
        shown = ", ".join(have[:3]) + (", ..." if len(have) > 3 else "")
        return (f"parameters other than the head were removed or changed ({shown}): only freeze and unfreeze "
                f"(requires_grad), and replace out_head; don't re-create or re-initialise the other layers, "
                f"their trained values would be lost")
    return ""


def _loss_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "loss" or have is None or want is None:
        return ""
    have, want = np.asarray(have, dtype=float), np.asarray(want, dtype=float)
    if have.shape != ():
        return ("the loss must be one number: cross_entropy of the last token's logits (batch, num_classes) "
                "against the labels (batch,), with the default mean")
    batch = int(np.asarray(case.arrays["inputs"]).shape[0])
    if want and np.isclose(have / want, batch, rtol=1e-4):
        return "that is the sum over the messages: keep cross_entropy's default reduction='mean'"
    return ("take the logits of the LAST token, model(input_batch)[:, -1, :] (the only position that has seen the "
            "whole message), and give them to cross_entropy as they are: it applies the softmax itself")


def _accuracy_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "accuracy" or not isinstance(want, float):
        return ""
    if isinstance(have, (int, float)) and not isinstance(have, bool) and have > 1 and np.isclose(have, 100 * want):
        return "that is a percentage: return the fraction, between 0 and 1 (correct / total)"
    if case.args.get("num_batches") is not None:
        return (f"use the first min(num_batches, len(data_loader)) batches (num_batches={case.args['num_batches']} "
                f"here), predict from the last token's logits, and divide the number right by the number of "
                f"messages in those batches")
    return ("predict from the LAST token's logits, argmax of model(input_batch)[:, -1, :], and divide the number "
            "right by the number of messages (a smaller last batch counts for fewer)")


def _classify_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    args = case.args
    if key == "label":
        if have in ("spam", "not spam") and want in ("spam", "not spam"):
            return ("the other label: predict from the LAST token's logits, argmax(model(x)[:, -1, :]), and class 1 "
                    "is spam: return \"spam\" when that argmax is 1")
        return f"return exactly the string \"spam\" or \"not spam\", got {have!r}"
    if key != "model_input" or not isinstance(have, list) or not isinstance(want, list):
        return ""
    pad = args.get("pad_token_id", 50256)
    context = args["context_length"] if args["model"] == "toy" else args["cfg"]["context_length"]
    length = min(args["max_length"], context)
    if len(have) != len(want):
        if len(have) == args["max_length"] and args["max_length"] > context:
            return (f"the model got max_length={args['max_length']} tokens, more than its context length {context}: "
                    f"use min(max_length, model.pos_emb.weight.shape[0]) tokens")
        return (f"the model got {len(have)} tokens, expected {length}: cut the ids to "
                f"min(max_length, context length) = {length} and pad them at the end to that length")
    if have[:1] == [pad] and want[:1] != [pad] and want[-1:] == [pad]:
        return "the padding is at the start: pad at the end, ids + [pad_token_id] * (length - len(ids))"
    if pad != 50256 and 50256 in have and 50256 not in want:
        return f"padded with 50256 instead of pad_token_id={pad}: use the pad_token_id given"
    return ("other token ids than tokenizer.encode(text), cut to its first min(max_length, context length) ids and "
            "padded at the end with pad_token_id")


def _evaluation_mode_hint(key, got, expected, case):
    """The model evaluated in train mode, or with gradients: both are the function's job to switch."""
    if key == "model_calls_in_train_mode":
        return ("the model ran in train mode (it is handed over that way, as right after training): call "
                "model.eval() before predicting, so that dropout is off and the same message always gets "
                "the same prediction")
    if key == "model_calls_with_grad":
        return ("the model ran with gradients enabled, recording a graph that no one uses: make the "
                "predictions inside `with torch.no_grad():`")
    return ""


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("The SMS Spam Collection holds 5,574 messages, 4,827 ham and 747 spam.",
                   "tests/chapters/test_ch07.py::"
                   "test_the_sms_collection_has_5574_messages_and_default_quoting_merges_three_of_them"),
    ReferenceValue("Balanced: 747 + 747 rows; split 70/10/20: 1,045, 149 and 300 rows.",
                   "tests/chapters/test_ch07.py::"
                   "test_balancing_and_the_70_10_20_split_give_747_747_and_1045_149_300"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "7.1": TaskSpec(
        contract=Contract(
            pinned=(
                "`create_balanced_dataset`: every spam row and as many ham rows, drawn with "
                "`sample(..., random_state=123)` from the ham rows; columns `Label` and `Text`.",
                "`random_split`: the rows shuffled with `sample(frac=1, random_state=123)`, then the first "
                "`int(n * train_frac)` rows, the next `int(n * validation_frac)`, and the rest; each part's rows "
                "in that order.",
                "Neither function changes the DataFrame it is given.",
            ),
            free=(
                "The order of the balanced rows (compared as a set) and whether the parts are renumbered.",
                "Cutting the validation part at `int(n * (train_frac + validation_frac))` instead.",
                "Any shuffle that draws as pandas does with seed 123 (NumPy's `RandomState(123).permutation` does).",
            )),
        probes={"balance": kinds.Function(balance_arguments, outputs=(), also=record_balanced,
                                          name="create_balanced_dataset"),
                "split": kinds.Function(split_arguments, outputs=(), also=record_split, name="random_split")},
        hints=(_frame_changed_hint, _balance_hint, _split_hint)),
    "7.2": TaskSpec(
        contract=Contract(
            pinned=(
                "Reads the CSV file (commas, quotes, line breaks and non-ASCII text in the messages) and encodes "
                "every message once, in `__init__`.",
                "Every item has the same length: the longest message for `max_length=None`, else `max_length`, "
                "cutting longer messages at the end and padding shorter ones at the end with `pad_token_id`.",
                "An item is `(token_ids, label)`: an int64 tensor and an integer label; a `DataLoader` stacks every "
                "item into int64 batches.",
            ),
            free=("Whether the label is a Python `int`, a NumPy integer or a 0-d integer tensor.",)),
        probes={"dataset": kinds.Function(dataset_arguments, outputs=(), also=record_dataset, name="SpamDataset")},
        hints=(_dataset_hint,)),
    "7.3": TaskSpec(
        contract=Contract(
            pinned=(
                "Changes the given model in place: every parameter frozen, then `out_head` replaced by a new "
                "`nn.Linear(emb_dim, num_classes)` with bias, then the last block and `final_norm` made trainable.",
                "No other parameter is removed or changes its value; models of one to three blocks, some already "
                "partly frozen.",
            ),
            free=("What it returns, as long as it is not another model.",)),
        probes={"head": kinds.Function(head_arguments, outputs=(), also=record_head, name="add_classification_head")},
        hints=(_head_hint,)),
    "7.4": TaskSpec(
        contract=Contract(
            pinned=(
                "Both read the prediction from the last token's logits.",
                "`calc_loss_batch_cls`: the mean cross-entropy against the labels, as a tensor gradients flow "
                "through, with both batches moved to `device`.",
                "`calc_accuracy_loader`: the fraction of messages (not batches) predicted right over the first "
                "`num_batches` batches (all for `None` or more), with the model in eval mode and no gradients, "
                "whatever mode it was given in.",
            ),
            free=("Whether the accuracy is a Python number or a 0-d tensor.",
                  "Whether the model's mode is put back afterwards (the checks read the mode of its calls only).")),
        probes={"loss": kinds.Function(loss_arguments, outputs=(("loss", "the returned loss"),), tensors=True,
                                       grad_of="loss", device_pass=True, name="calc_loss_batch_cls"),
                "accuracy": kinds.Function(accuracy_arguments, outputs=(), also=record_accuracy, device_pass=True,
                                           name="calc_accuracy_loader")},
        hints=(_evaluation_mode_hint, _loss_hint, _accuracy_hint)),
    "7.5": TaskSpec(
        contract=Contract(
            pinned=(
                "The model's last call gets one batch of one message: its ids cut to `min(max_length, context "
                "length)` and padded at the end with `pad_token_id` to that length, on `device`.",
                "Eval mode and no gradients, whatever mode the model was given in; `\"spam\"` when class 1 wins "
                "at the last token, `\"not spam\"` otherwise.",
            ),
            free=("Whether the model's mode is put back afterwards (the checks read the mode of its calls only).",)),
        probes={"classify": kinds.Function(classify_arguments, outputs=(), also=record_model_input, device_pass=True,
                                           name="classify_text")},
        hints=(_evaluation_mode_hint, _classify_hint)),
}
