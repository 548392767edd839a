"""Kinds that exercise the data pipeline: data sets, loaders, files.

| kind          | exercises                                | observations                          |
|---------------|------------------------------------------|---------------------------------------|
| Dataset       | a Dataset: len and selected items        | len, item_types, item/<i>             |
| Loader        | a function that returns a DataLoader     | num_batches, sampler, batch/<i>,      |
|               |                                          | batch_shapes, windows (sorted)        |
| FileRoundTrip | a writer and a reader, through a file    | file_written, read_back               |
"""
import os
import warnings

import torch

from ..probes import ProbeFailure
from .base import Kind, _describe_call


class Dataset(Kind):
    """A torch Dataset: its length and the items the case's args["items"] lists.

    construct(probe) -> (positional, keywords), e.g. a text, probe.ctx.tokenizer and sizes.
    item_types: also record what the first listed item is made of (`item_types`: "tensor
    int64" per element), so that a list of ints or a float tensor is named as such before
    its values are compared (values are compared as numbers, whatever their dtype).
    A case with args["may_refuse"] records first whether creating the data set raised
    (`refused`), and nothing more when it did.
    """

    def __init__(self, construct, items_arg="items", item_types=False, types_message=None):
        self.construct = construct
        self.items_arg = items_arg
        self.item_types = item_types
        if types_message:
            self.messages = {"item_types": types_message}

    def probe(self, probe):
        positional, keywords = self.construct(probe)
        if probe.case.args.get("may_refuse"):
            # Where the contract allows either an empty data set or an error (a text too short for
            # one window), an exception is an answer, recorded as such; the grader's side lists
            # {"refused": True} as an accepted alternative to the reference's empty data set.
            try:
                dataset = probe.construct(probe.obj, positional, keywords, module=False)
            except Exception:  # noqa: BLE001 - any deliberate refusal will do
                probe.record_value("refused", True, "whether creating it raised an error")
                return
            probe.record_value("refused", False, "whether creating it raised an error")
        else:
            dataset = probe.construct(probe.obj, positional, keywords, module=False)
        if not isinstance(dataset, torch.utils.data.Dataset):
            raise ProbeFailure(f"{type(dataset).__name__} should be a subclass of torch.utils.data.Dataset")
        probe.step = "calling len() of your dataset"
        probe.record_value("len", len(dataset), "len(dataset)")
        items = probe.case.args.get(self.items_arg, [0])
        for position, i in enumerate(items):
            probe.step = f"reading item {i} of your dataset"
            item = dataset[i]
            if self.item_types and position == 0:
                probe.record_value("item_types", describe_types(item), f"the types in dataset[{i}]")
            probe.record_value(f"item/{i}", item, f"dataset[{i}]")


def describe_types(value):
    """'tensor int64' for a tensor, the type's name otherwise; a list for a tuple or list."""
    if isinstance(value, (tuple, list)):
        return [describe_types(v) for v in value]
    if isinstance(value, torch.Tensor):
        return f"tensor {str(value.dtype).replace('torch.', '')}"
    return type(value).__name__


class Loader(Kind):
    """A function that returns a DataLoader: how many batches, and what they hold.

    call(probe) -> (positional, keywords). What is recorded besides `num_batches` follows the
    case's args:
    - "batches" (default 2): the first batches, compared as they are (a loader that does
      not shuffle);
    - "sampler": the name of the loader's sampler class (RandomSampler when it shuffles);
    - "num_workers": the loader's num_workers (with "batches": 0, no batch is read, so no
      worker process starts);
    - "batch_shapes": the shape of every tensor of every batch (order-free, so fine for a
      shuffled loader);
    - "windows": every row of every batch, (input row, target row) pairs, sorted: the same
      multiset whatever order a shuffled loader draws them in.
    """

    def __init__(self, call):
        self.call = call
        self.hints = (sampler_hint,)

    def probe(self, probe):
        positional, keywords = self.call(probe)
        fn = probe.obj
        probe.step = f"calling {getattr(fn, '__name__', 'your function')}({_describe_call(probe, positional, keywords)})"
        with warnings.catch_warnings():
            # torch warns when num_workers is more than this machine's cores: the case asks only
            # that the argument is passed on, and nbgrader scores any warning a check cell prints
            # as a failure, so the same code would lose its points on a machine with fewer cores.
            warnings.filterwarnings("ignore", message="This DataLoader will create", category=UserWarning)
            loader = fn(*positional, **keywords)
        if not isinstance(loader, torch.utils.data.DataLoader):
            raise ProbeFailure(f"{getattr(fn, '__name__', 'your function')} should return a "
                               f"torch.utils.data.DataLoader, got {type(loader).__name__}")
        probe.step = "calling len() of the returned loader"
        probe.record_value("num_batches", len(loader), "len(loader)")
        args = probe.case.args
        if args.get("sampler"):
            probe.record_value("sampler", type(loader.sampler).__name__, "the loader's sampler")
        if args.get("num_workers"):
            probe.record_value("num_workers", loader.num_workers, "the loader's num_workers")
        wanted = args.get("batches", 2)
        read_all = args.get("batch_shapes") or args.get("windows")
        if not wanted and not read_all:
            return  # iterating would start the loader's worker processes for nothing
        shapes, rows = [], []
        for i, batch in enumerate(loader):
            if i >= wanted and not read_all:
                break
            probe.step = f"reading batch {i} of the loader"
            if i < wanted:
                probe.record_value(f"batch/{i}", batch, f"batch {i}")
            if args.get("batch_shapes"):
                shapes.append(describe_shapes(batch))
            if args.get("windows"):
                rows.extend(_window_rows(batch))
        if args.get("batch_shapes"):
            probe.record_value("batch_shapes", sorted(shapes), "the shapes of the batches")
        if args.get("windows"):
            probe.record_value("windows", sorted(rows), "every (input, target) window of the loader, sorted")


def sampler_hint(key, got, expected, case):
    if key == "sampler" and isinstance(got.get(key), str) and isinstance(expected.get(key), str):
        return (f"the loader's sampler is a {got[key]}, expected a {expected[key]}: DataLoader(..., shuffle=True) "
                f"draws the windows with a RandomSampler, shuffle=False reads them in order with a "
                f"SequentialSampler; pass the function's shuffle argument on to the DataLoader")
    return ""


def describe_shapes(batch):
    """[[2, 4], [2, 4]] for a batch of two (2, 4) tensors; a type's name for anything else."""
    parts = batch if isinstance(batch, (tuple, list)) else [batch]
    return [list(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__ for t in parts]


def _window_rows(batch):
    """[(input ids, target ids)] of one (inputs, targets) batch, as lists of ints."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ProbeFailure(f"a batch should be a pair (inputs, targets), got {type(batch).__name__}")
    inputs, targets = (to_int_rows(t) for t in batch)
    return [[x, y] for x, y in zip(inputs, targets)]


def to_int_rows(value):
    if isinstance(value, torch.Tensor):
        return torch.Tensor.detach(value).cpu().to(torch.int64).tolist()
    raise ProbeFailure(f"a batch should hold tensors, got {type(value).__name__}")


class FileRoundTrip(Kind):
    """Write with one graded function, read back with another, through a file in ctx.scratch.

    write(probe, writer, path) calls the writer; read(probe, reader, path) calls the reader and
    returns what to record (e.g. the state it restored). The file name is args["filename"].
    """

    def __init__(self, writer, reader, write, read):
        self.writer, self.reader = writer, reader
        self.write, self.read = write, read

    def probe(self, probe):
        path = os.path.join(probe.ctx.scratch, probe.case.args.get("filename", "round_trip.bin"))
        probe.step = f"calling {self.writer}(..., {os.path.basename(path)!r})"
        self.write(probe, probe.name(self.writer), path)
        if not os.path.isfile(path):
            raise ProbeFailure(f"{self.writer} did not write a file at the path it was given")
        probe.record_value("file_written", True, "whether a file was written")
        probe.step = f"calling {self.reader}({os.path.basename(path)!r}, ...)"
        probe.record_value("read_back", self.read(probe, probe.name(self.reader), path), f"what {self.reader} returned")
