"""Every probe kind (course/gptcourse/checking/kinds/) on a toy task defined here, before any chapter
needs it: the reference passes, a correct alternative passes, a wrong version is caught with
a message that says what is wrong.

The toy tasks live in a toy chapter "99_toy", added the way a real chapter is: one entry of the
course table (gptcourse.checking.course, here through register_chapter) and a chapter module (here built
in memory) with its SPECS.
"""
import contextlib
import os
import re
import sys
import types

import numpy as np
import pytest
import torch
import torch.nn as nn

from gptcourse.checking import kinds, tasks
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.judge import judge
from gptcourse.checking.probes import META, ProbeContext, device_pass_supported, run_probe
from gptcourse.checking.records import Case
from gptcourse.checking.tasks import Task

TOY = "99_toy"


# ------------------------------------------------------------------------------------------
# The toy chapter's reference code
# ------------------------------------------------------------------------------------------

class ToyLinear(nn.Module):
    """99.1: y = x @ W.T + b, plus a learned offset per position."""

    def __init__(self, d_in, d_out, max_len=8):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out)
        self.pos = nn.Embedding(max_len, d_out)

    def forward(self, x):
        positions = torch.arange(x.shape[-2], device=x.device)
        return self.proj(x) + self.pos(positions)


class ToyDropout(nn.Module):
    """99.2: twice the input, with dropout on the input."""

    def __init__(self, probe):
        super().__init__()
        self.drop = nn.Dropout(probe)

    def forward(self, x):
        return 2 * self.drop(x)


class ToyEven:
    """99.3: refuses odd sizes."""

    def __init__(self, n):
        if n % 2:
            raise ValueError("n must be even")
        self.n = n


def toy_stats(values, text):
    """99.4: plain outputs of every type."""
    mean = sum(values) / len(values) if values else float("nan")
    return {"mean": mean, "words": text.split(), "count": len(values), "empty": not values}


def toy_future_fill(scores):
    """99.5: scores with the future filled with -inf (a tensor function)."""
    t = scores.shape[-1]
    future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=scores.device), 1)
    return scores.masked_fill(future, float("-inf"))


class ToyTokenizer:
    """99.6: words <-> ids."""

    def __init__(self, vocab):
        self.str_to_int = dict(vocab)
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        return [self.str_to_int.get(word, 0) for word in text.split()]

    def decode(self, ids):
        return " ".join(self.int_to_str[i] for i in ids)


class ToyWindows(torch.utils.data.Dataset):
    """99.7: sliding windows of token ids, target shifted by one."""

    def __init__(self, ids, size, stride):
        self.inputs, self.targets = [], []
        for i in range(0, len(ids) - size, stride):
            self.inputs.append(torch.tensor(ids[i:i + size]))
            self.targets.append(torch.tensor(ids[i + 1:i + size + 1]))

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        return self.inputs[i], self.targets[i]


def toy_loader(ids, batch_size, size=3):
    """99.8: batches of windows, in order, the last partial batch dropped."""
    return torch.utils.data.DataLoader(ToyWindows(ids, size, size), batch_size=batch_size, shuffle=False,
                                       drop_last=True)


def toy_shuffled_loader(ids, batch_size, shuffle):
    """99.12: windows of three ids, shuffled or not, the last partial batch kept."""
    return torch.utils.data.DataLoader(ToyWindows(ids, 3, 2), batch_size=batch_size, shuffle=shuffle)


def toy_lookup(ids, table):
    """99.13: an embedding table handed in as an argument, looked up twice."""
    return 2 * table(ids)


class ToyScaled(nn.Module):
    """99.14: a learned scale that starts at ones, and a stack of such layers."""

    def __init__(self, dim, layers=1):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.more = nn.Sequential(*[nn.Linear(dim, dim) for _ in range(layers)])

    def forward(self, x):
        return self.more(x * self.scale)


def toy_extend(model, ids, steps):
    """99.15: append `steps` ids, each the model's argmax at the last position, without gradients."""
    for _ in range(steps):
        with torch.no_grad():
            logits = model(ids)
        ids = torch.cat((ids, logits[:, -1:].argmax(dim=-1)), dim=1)
    return ids


class ToyCounter(nn.Module):
    """The model 99.15 drives: next id = (last id + 1) mod 5; notes the grad mode of each call."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.0))
        self.grad_enabled = []

    def forward(self, ids):
        self.grad_enabled.append(torch.is_grad_enabled())
        return torch.nn.functional.one_hot((ids + 1) % 5, 5).to(self.w.dtype) * self.w


def _toy_extend_arguments(probe):
    probe.kept["toy_model"] = probe.module_input("model", ToyCounter())
    return [probe.kept["toy_model"], probe.input("ids"), probe.case.args["steps"]], {}


def _toy_record_grad_mode(probe):
    probe.record_value("calls_with_grad", sum(probe.kept["toy_model"].grad_enabled), "model calls with gradients")


def save_toy(tensors, path):
    """99.9 (two graded names): a dict of tensors to a file and back."""
    torch.save(tensors, path)


def load_toy(path):
    return torch.load(path, weights_only=True)


def train_toy(model, batches, optimizer):
    """99.10: one step per batch, returns the losses."""
    losses = []
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def sample_toy(probs, n):
    """99.11: n draws from a categorical distribution."""
    return torch.multinomial(probs, n, replacement=True)


def train_eval_toy(model, batches, optimizer, warmup):
    """99.16: a rate that halves every step, clipping from step `warmup` on, an evaluation
    (eval mode, no gradients) after every step; returns the evaluation losses."""
    peak, losses = optimizer.param_groups[0]["lr"], []
    for step, (x, y) in enumerate(batches):
        for group in optimizer.param_groups:
            group["lr"] = peak / 2 ** step
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        if step >= warmup:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        model.eval()
        with torch.no_grad():
            losses.append(((model(x) - y) ** 2).mean().item())
        model.train()
    return losses


def toy_rate(step, total):
    """99.17: a rate that falls linearly from 1 to 0."""
    return 1 - step / total


def toy_checked_copy(values, shape):
    """99.18: refuses values of another shape, naming them."""
    if tuple(values.shape) != tuple(shape):
        raise ValueError(f"'values' has shape {tuple(values.shape)}, expected {tuple(shape)}")
    return values.clone()


class ToyRunningMean(nn.Module):
    """99.19: the running mean of the tokens seen so far, times a weight; with use_cache=True the
    sum and count carry over to the next call, up to `limit` tokens."""

    def __init__(self, dim, limit):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.limit = limit
        self.cache_sum = None
        self.seen = 0

    def reset_cache(self):
        self.cache_sum, self.seen = None, 0

    def forward(self, x, use_cache=False):
        start = self.seen if use_cache else 0
        if use_cache and start + x.shape[1] > self.limit:
            raise ValueError(f"past the limit of {self.limit} tokens")
        total = torch.cumsum(x, dim=1)
        if use_cache and self.cache_sum is not None:
            total = total + self.cache_sum
        if use_cache:
            self.cache_sum, self.seen = total[:, -1:], start + x.shape[1]
        count = torch.arange(start + 1, start + x.shape[1] + 1, device=x.device, dtype=x.dtype).view(1, -1, 1)
        return self.scale * total / count


# ------------------------------------------------------------------------------------------
# The toy chapter module: what chapters/chNN_name.py holds for a real chapter
# ------------------------------------------------------------------------------------------

def _toy_dropout_judge(got, expected, case):
    """Each train-mode element is 0 or 2 x / (1 - p); some are dropped."""
    x, p = expected["internals/x"], case.args["p"]
    dropped = 0
    for i in range(3):
        out = got.get(f"train_{i}")
        ok = np.isclose(out, 0) | np.isclose(out, 2 * x / (1 - p))
        if not ok.all():
            return "in train mode the output is not the input with some elements dropped"
        dropped += int(np.isclose(out, 0).sum())
    return None if dropped else "in train mode nothing was ever dropped"


def _toy_train_build(probe):
    model = probe.name("ToyLinear")(2, 1)
    probe.load_state(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = probe.tensor("x"), probe.tensor("y")
    return {"model": model, "optimizer": optimizer, "batches": [(x[i], y[i]) for i in range(len(x))]}


TOY_TASKS = (
    Task("99.1", TOY, ("ToyLinear",), "B", "module forward"),
    Task("99.2", TOY, ("ToyDropout",), "B", "module dropout"),
    Task("99.3", TOY, ("ToyEven",), "B", "raises on construct"),
    Task("99.4", TOY, ("toy_stats",), "B", "pure function with plain outputs"),
    Task("99.5", TOY, ("toy_future_fill",), "B", "tensor function"),
    Task("99.6", TOY, ("ToyTokenizer",), "B", "class with methods"),
    Task("99.7", TOY, ("ToyWindows",), "B", "data set"),
    Task("99.8", TOY, ("toy_loader",), "B", "loader"),
    Task("99.9", TOY, ("save_toy", "load_toy"), "B", "file round trip"),
    Task("99.10", TOY, ("train_toy",), "B", "training loop"),
    Task("99.11", TOY, ("sample_toy",), "B", "sampler"),
    Task("99.12", TOY, ("toy_shuffled_loader",), "B", "shuffled loader"),
    Task("99.13", TOY, ("toy_lookup",), "B", "function of a module argument"),
    Task("99.14", TOY, ("ToyScaled",), "B", "initial values and size on meta"),
    Task("99.15", TOY, ("toy_extend",), "B", "a function that drives a model"),
    Task("99.16", TOY, ("train_eval_toy",), "B", "training loop with evaluation, a schedule and clipping"),
    Task("99.17", TOY, ("toy_rate",), "B", "a function called once per step"),
    Task("99.18", TOY, ("toy_checked_copy",), "B", "a call that must raise, naming what is wrong"),
    Task("99.19", TOY, ("ToyRunningMean",), "B", "a module with state, driven by a script"),
)

TOY_PROBES = {
    "99.1": {"forward": kinds.ModuleForward(lambda a: ([a["d_in"], a["d_out"]], {}), ("proj", "pos"))},
    "99.2": {"dropout": kinds.ModuleDropout(lambda a: ([a["p"]], {}), _toy_dropout_judge)},
    "99.3": {"raises": kinds.RaisesOnConstruct(lambda a: ([a["n"]], {}), "an odd size must be refused")},
    "99.4": {"call": kinds.Function(lambda probe: ([probe.case.args["values"], probe.case.args["text"]], {}))},
    "99.5": {"call": kinds.Function(lambda probe: ([probe.input("scores", requires_grad=True)], {}),
                                    outputs=(("filled", "the returned scores"),), tensors=True,
                                    grad_of="filled")},
    "99.6": {"methods": kinds.Methods(lambda probe: ([probe.case.args["vocab"]], {}))},
    "99.7": {"items": kinds.Dataset(lambda probe: ([probe.case.args["ids"], probe.case.args["size"], probe.case.args["stride"]], {}))},
    "99.8": {"batches": kinds.Loader(lambda probe: ([probe.case.args["ids"], probe.case.args["batch_size"]], {}))},
    "99.9": {"file": kinds.FileRoundTrip(
        "save_toy", "load_toy",
        write=lambda probe, save, path: save({"w": probe.tensor("w")}, path),
        read=lambda probe, load, path: load(path))},
    "99.10": {"train": kinds.TrainingLoop(_toy_train_build,
                                          lambda probe, fn, o: fn(o["model"], o["batches"], o["optimizer"]))},
    "99.11": {"sample": kinds.Sampler(lambda probe, fn: fn(probe.tensor("probs"), probe.case.args["draws"]))},
    "99.12": {"batches": kinds.Loader(lambda probe: ([probe.case.args["ids"], 2, probe.case.args["shuffle"]], {}))},
    "99.13": {"call": kinds.Function(
        lambda probe: ([probe.input("ids"), probe.module_input("table", nn.Embedding(*probe.case.arrays["state/table.weight"].shape))], {}),
        outputs=(("looked_up", "the returned embeddings"),), tensors=True, grad_of="looked_up")},
    "99.14": {"forward": kinds.ModuleForward(lambda a: ([a["dim"]], {}), initial_values=("scale",)),
              "size": kinds.ModuleSize(lambda a: ([a["dim"]], {"layers": a["layers"]}))},
    "99.15": {"call": kinds.Function(_toy_extend_arguments, outputs=(("ids", "the returned ids"),),
                                     device_pass=True, also=_toy_record_grad_mode)},
    "99.16": {"train": kinds.TrainingLoop(_toy_train_build, lambda probe, fn, o: fn(o["model"], o["batches"], o["optimizer"],
                                                                                probe.case.args["warmup"]),
                                          spy=True, optimizer_view=True)},
    "99.17": {"rates": kinds.Repeated(what="the rates")},
    "99.18": {"raises": kinds.RaisesOnCall(lambda probe: ([probe.tensor("values"), probe.case.args["shape"]], {}),
                                           message_ok=lambda text, case: "values" in text,
                                           messages={"raised": "values of the wrong shape were accepted",
                                                     "message_ok": "the error does not name the values"})},
    "99.19": {"steps": kinds.ModuleSteps(lambda a: ([a["dim"], a["limit"]], {}))},
}

# The toy chapter module's SPECS: each task's probes (no task-specific hints here).
TOY_SPECS = {task_id: TaskSpec(probes) for task_id, probes in TOY_PROBES.items()}

REFERENCE = {
    "99.1": ToyLinear, "99.2": ToyDropout, "99.3": ToyEven, "99.4": toy_stats, "99.5": toy_future_fill,
    "99.6": ToyTokenizer, "99.7": ToyWindows, "99.8": toy_loader,
    "99.9": {"save_toy": save_toy, "load_toy": load_toy}, "99.10": train_toy, "99.11": sample_toy,
    "99.12": toy_shuffled_loader, "99.13": toy_lookup, "99.14": ToyScaled, "99.15": toy_extend,
    "99.16": train_eval_toy, "99.17": toy_rate, "99.18": toy_checked_copy, "99.19": ToyRunningMean,
}


@pytest.fixture(autouse=True)
def toy_chapter(monkeypatch):
    """Register the toy chapter: one entry of the course table and its chapter module (undone
    afterwards)."""
    module = types.ModuleType(f"gptcourse.checking.chapters.ch{TOY}")
    module.CHAPTER, module.SPECS = TOY, TOY_SPECS
    module.KEY_NAMES = {"filled": "Filled scores"}
    monkeypatch.setitem(sys.modules, module.__name__, module)
    tasks.register_chapter(tasks.Chapter(TOY, "A toy chapter", 60, TOY_TASKS))
    yield
    tasks.unregister_chapter(TOY)


def verdict_of(task_id, kind, student, args=None, arrays=None, extras=None, earlier=None, device="cpu",
               dtype="float32"):
    """Probe the reference and the student's code on one case; the judge's message or None."""
    case = Case(task_id, kind, "a toy case", args or {}, arrays or {}, dtype, device)
    expected = probe(REFERENCE[task_id], case, earlier)
    assert "error" not in expected, expected
    expected.update(extras or {})
    return judge(task_id, case, probe(student, case, earlier), expected)


def probe(obj, case, earlier=None):
    torch.manual_seed(0)
    return run_probe(obj, case, ProbeContext(earlier=earlier))


def linear_arrays(rng, batch=2, tokens=3, d_in=2, d_out=1, max_len=8):
    return {"x": rng.normal(size=(batch, tokens, d_in)), "grad_seed": rng.normal(size=(batch, tokens, d_out)),
            "state/proj.weight": rng.normal(size=(d_out, d_in)), "state/proj.bias": rng.normal(size=(d_out,)),
            "state/pos.weight": rng.normal(size=(max_len, d_out))}


# ------------------------------------------------------------------------------------------
# The task table and the context
# ------------------------------------------------------------------------------------------

def test_a_new_chapter_is_one_chapters_entry_and_its_module():
    assert [t.id for t in tasks.tasks_of(TOY)] == [t.id for t in TOY_TASKS]
    assert tasks.get_task("99.9").names == ("save_toy", "load_toy")
    assert tasks.task_of_cell("check_99_10").id == "99.10"


def test_context_is_seeded_per_case_and_cleans_its_scratch_folder():
    case = Case("99.4", "call", "one", {}, {})
    first, again = ProbeContext().for_case(case), ProbeContext().for_case(case)
    assert first.rng.integers(1 << 30) == again.rng.integers(1 << 30)
    other = ProbeContext().for_case(Case("99.4", "call", "two", {}, {}))
    assert other.seed != first.seed
    folder = first.scratch
    assert os.path.isdir(folder)
    first.cleanup()
    assert not os.path.exists(folder)
    given = ProbeContext(scratch=str(folder) + "-given")
    assert given.for_case(case).scratch == str(folder) + "-given"


# ------------------------------------------------------------------------------------------
# ModuleForward (and the device pass)
# ------------------------------------------------------------------------------------------

class LinearOtherInit(ToyLinear):
    """Correct: a different initialisation (weights are copied in by name)."""

    def __init__(self, d_in, d_out, max_len=8):
        super().__init__(d_in, d_out, max_len)
        nn.init.zeros_(self.proj.weight)


class LinearPositionsOnCpu(ToyLinear):
    """Wrong only on a GPU: positions made on the CPU meet the GPU's embedding table."""

    def forward(self, x):
        return self.proj(x) + self.pos(torch.arange(x.shape[-2]))


class LinearNoPositions(ToyLinear):
    def forward(self, x):
        return self.proj(x)


class LinearInPlace(ToyLinear):
    def forward(self, x):
        x.mul_(1.0).add_(0.5)
        return super().forward(x)


class LinearRandomInEval(ToyLinear):
    def forward(self, x):
        return super().forward(x) * (1 + torch.rand(()))


def test_module_forward_accepts_the_reference_and_another_initialisation():
    arrays = linear_arrays(np.random.default_rng(0))
    assert verdict_of("99.1", "forward", ToyLinear, {"d_in": 2, "d_out": 1}, arrays) is None
    assert verdict_of("99.1", "forward", LinearOtherInit, {"d_in": 2, "d_out": 1}, arrays) is None


def test_module_forward_reports_wrong_outputs_in_place_changes_and_random_eval():
    arrays = linear_arrays(np.random.default_rng(1))
    args = {"d_in": 2, "d_out": 1}
    assert "not the expected values" in verdict_of("99.1", "forward", LinearNoPositions, args, arrays)
    assert "changed its input x in place" in verdict_of("99.1", "forward", LinearInPlace, args, arrays)
    assert "eval mode" in verdict_of("99.1", "forward", LinearRandomInEval, args, arrays)


def test_module_forward_structure_names_the_attribute():
    class Renamed(ToyLinear):
        def __init__(self, d_in, d_out, max_len=8):
            super().__init__(d_in, d_out, max_len)
            self.offsets = self.pos
            del self.pos

        def forward(self, x):
            return self.proj(x) + self.offsets(torch.arange(x.shape[-2], device=x.device))

    message = verdict_of("99.1", "forward", Renamed, {"d_in": 2, "d_out": 1}, linear_arrays(np.random.default_rng(2)))
    assert "`pos` should be" in message and "missing" in message


def test_device_pass_catches_a_tensor_created_on_the_cpu_that_meta_alone_lets_through():
    args, arrays = {"d_in": 2, "d_out": 1}, linear_arrays(np.random.default_rng(3))
    case = Case("99.1", "forward", "toy", args, arrays)
    assert device_pass_supported(case)
    # The CPU run cannot see the mistake: the numbers are right.
    assert verdict_of("99.1", "forward", LinearPositionsOnCpu, args, arrays) is None
    # PyTorch's meta embedding kernel accepts CPU indices; the device pass does not.
    message = verdict_of("99.1", "forward", LinearPositionsOnCpu, args, arrays, device=META)
    assert "on the CPU" in message and "`embedding`" in message and "device=x.device" in message
    assert verdict_of("99.1", "forward", ToyLinear, args, arrays, device=META) is None


def test_device_pass_ignores_errors_that_are_not_about_devices():
    class UsesItem(ToyLinear):
        def forward(self, x):
            scale = float(x.abs().max().item() > -1)  # data-dependent: impossible on meta
            return super().forward(x) * scale

    args, arrays = {"d_in": 2, "d_out": 1}, linear_arrays(np.random.default_rng(4))
    assert verdict_of("99.1", "forward", UsesItem, args, arrays) is None
    assert verdict_of("99.1", "forward", UsesItem, args, arrays, device=META) is None


# ------------------------------------------------------------------------------------------
# ModuleDropout, RaisesOnConstruct
# ------------------------------------------------------------------------------------------

class DropoutAlwaysOn(ToyDropout):
    def forward(self, x):
        return 2 * nn.functional.dropout(x, self.drop.p, training=True)


class DropoutNever(ToyDropout):
    def forward(self, x):
        return 2 * x


class DropoutOtherDraws(ToyDropout):
    """Correct: draws its own random numbers (a different pattern than nn.Dropout's)."""

    def forward(self, x):
        if not self.training:
            return 2 * x
        keep = (torch.rand_like(x) >= self.drop.p).to(x.dtype)
        return 2 * x * keep / (1 - self.drop.p)


def test_module_dropout_uses_the_chapters_judge_for_random_outputs():
    x = np.random.default_rng(5).normal(size=(4, 6))
    extras = {"internals/x": x}
    args, arrays = {"p": 0.5}, {"x": x}
    assert verdict_of("99.2", "dropout", ToyDropout, args, arrays, extras) is None
    assert verdict_of("99.2", "dropout", DropoutOtherDraws, args, arrays, extras) is None
    assert "not the input with some elements dropped" in verdict_of("99.2", "dropout", DropoutNever, args, arrays, extras)
    message = verdict_of("99.2", "dropout", DropoutAlwaysOn, args, arrays, extras)
    assert "eval mode" in message and "training=self.training" in message


def test_raises_on_construct():
    class NeverRaises:
        def __init__(self, n):
            self.n = n

    assert verdict_of("99.3", "raises", ToyEven, {"n": 3}) is None
    assert verdict_of("99.3", "raises", NeverRaises, {"n": 3}) == "an odd size must be refused"


# ------------------------------------------------------------------------------------------
# Function: plain outputs, tensors, gradients
# ------------------------------------------------------------------------------------------

def test_function_records_plain_outputs_including_nan_strings_and_dicts():
    args = {"values": [], "text": "a b  c"}
    case = Case("99.4", "call", "toy", args, {})
    observed = probe(toy_stats, case)["result"]
    assert np.isnan(observed["mean"]) and observed["words"] == ["a", "b", "c"] and observed["empty"] is True
    assert verdict_of("99.4", "call", toy_stats, args) is None  # nan equals nan

    def words_as_tuple(values, text):
        result = toy_stats(values, text)
        return {**result, "mean": 0.0}

    message = verdict_of("99.4", "call", words_as_tuple, args)
    assert message == "result: ['mean'] is 0.0, expected nan"


def test_function_refuses_objects_that_claim_to_equal_everything():
    class Anything:
        def __eq__(self, other):
            return True

    message = verdict_of("99.4", "call", lambda values, text: Anything(), {"values": [1.0], "text": "x"})
    assert "cannot compare a value of type Anything" in message


def test_tensor_function_gradients_in_place_and_device_pass():
    rng = np.random.default_rng(6)
    arrays = {"scores": rng.normal(size=(3, 3)), "grad_seed": rng.normal(size=(3, 3))}

    def in_place(scores):
        t = scores.shape[-1]
        return scores.masked_fill_(torch.triu(torch.ones(t, t, dtype=torch.bool, device=scores.device), 1), float("-inf"))

    def detached(scores):
        return toy_future_fill(scores).detach()

    def mask_on_cpu(scores):
        t = scores.shape[-1]
        return scores.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))

    assert device_pass_supported(Case("99.5", "call", "toy", {}, arrays))
    assert not device_pass_supported(Case("99.4", "call", "toy", {}, {}))  # plain values: nothing to move
    assert verdict_of("99.5", "call", toy_future_fill, {}, arrays) is None
    assert "changed its input scores in place" in verdict_of("99.5", "call", in_place, {}, arrays)
    assert "not connected to the autograd graph" in verdict_of("99.5", "call", detached, {}, arrays)
    assert verdict_of("99.5", "call", mask_on_cpu, {}, arrays) is None
    assert "on the CPU" in verdict_of("99.5", "call", mask_on_cpu, {}, arrays, device=META)
    assert "should be a torch.Tensor" in verdict_of("99.5", "call", lambda s: s.tolist(), {}, arrays)


# ------------------------------------------------------------------------------------------
# Methods, Dataset, Loader, FileRoundTrip
# ------------------------------------------------------------------------------------------

VOCAB = {"<unk>": 0, "hello": 1, "world": 2}


def test_methods_calls_in_order_and_can_feed_a_result_back():
    calls = [{"method": "encode", "args": ["hello big world"]}, {"method": "decode", "args": [{"$result": 0}]}]
    args = {"vocab": VOCAB, "calls": calls}

    class NoSpaces(ToyTokenizer):
        def decode(self, ids):
            return "".join(self.int_to_str[i] for i in ids)

    class NoDecode:
        def __init__(self, vocab):
            self.vocab = vocab

        def encode(self, text):
            return ToyTokenizer(self.vocab).encode(text)

    assert verdict_of("99.6", "methods", ToyTokenizer, args) is None
    message = verdict_of("99.6", "methods", NoSpaces, args)
    assert "The result of call 2, .decode(...)" in message and "'hello<unk>world'" in message
    assert "has no method decode()" in verdict_of("99.6", "methods", NoDecode, args)


def test_dataset_length_and_items():
    args = {"ids": list(range(10, 22)), "size": 4, "stride": 2, "items": [0, 3]}

    class OffByOne(ToyWindows):
        def __len__(self):
            return super().__len__() + 1

    class NotADataset:
        def __init__(self, ids, size, stride):
            pass

    assert verdict_of("99.7", "items", ToyWindows, args) is None
    assert "len(dataset): expected 4, got 5" in verdict_of("99.7", "items", OffByOne, args)
    assert "should be a subclass of torch.utils.data.Dataset" in verdict_of("99.7", "items", NotADataset, args)


def test_loader_batches_in_order():
    args = {"ids": list(range(17)), "batch_size": 2, "batches": 2}

    def keeps_last(ids, batch_size, size=3):
        return torch.utils.data.DataLoader(ToyWindows(ids, size, size), batch_size=batch_size)

    assert verdict_of("99.8", "batches", toy_loader, args) is None
    assert "Number of batches, len(loader): expected 2, got 3" in verdict_of("99.8", "batches", keeps_last, args)


def test_dataset_item_types_name_lists_and_float_tensors():
    probes = dict(TOY_PROBES["99.7"], typed=kinds.Dataset(TOY_PROBES["99.7"]["items"].construct, item_types=True,
                                                           types_message="items should be int64 tensors"))
    args = {"ids": list(range(10, 22)), "size": 4, "stride": 2, "items": [1, 2]}

    class Lists(ToyWindows):
        def __getitem__(self, i):
            return self.inputs[i].tolist(), self.targets[i].tolist()

    class Floats(ToyWindows):
        def __getitem__(self, i):
            return self.inputs[i].float(), self.targets[i].float()

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(TOY_SPECS, "99.7", TaskSpec(probes))
        assert probe(ToyWindows, Case("99.7", "typed", "c", args))["item_types"] == ["tensor int64", "tensor int64"]
        assert verdict_of("99.7", "typed", ToyWindows, args) is None
        assert verdict_of("99.7", "typed", Lists, args) == "items should be int64 tensors"
        assert verdict_of("99.7", "typed", Floats, args) == "items should be int64 tensors"
        # Without item_types, values are compared as numbers: the float items pass.
        assert verdict_of("99.7", "items", Floats, args) is None


def test_loader_of_a_shuffled_loader_is_judged_by_its_sampler_shapes_and_windows():
    args = {"ids": list(range(20)), "shuffle": True, "batches": 0, "sampler": True, "windows": True,
            "batch_shapes": True}
    observed = probe(toy_shuffled_loader, Case("99.12", "batches", "c", args))
    assert observed["sampler"] == "RandomSampler"
    assert observed["batch_shapes"] == [[[1, 3], [1, 3]]] + [[[2, 3], [2, 3]]] * 4
    assert observed["windows"][0] == [[0, 1, 2], [1, 2, 3]] and len(observed["windows"]) == 9
    assert not any(key.startswith("batch/") for key in observed)

    def never_shuffles(ids, batch_size, shuffle):
        return toy_shuffled_loader(ids, batch_size, False)

    def loses_a_window(ids, batch_size, shuffle):
        return toy_shuffled_loader(ids[:-1], batch_size, shuffle)

    def returns_the_dataset(ids, batch_size, shuffle):
        return ToyWindows(ids, 3, 2)

    for _ in range(3):  # any order the shuffle draws passes
        assert verdict_of("99.12", "batches", toy_shuffled_loader, args) is None
    assert "the loader's sampler is a SequentialSampler, expected a RandomSampler" in verdict_of(
        "99.12", "batches", never_shuffles, args)
    assert "Number of batches" in verdict_of("99.12", "batches", loses_a_window, args)
    assert "should return a torch.utils.data.DataLoader, got ToyWindows" in verdict_of(
        "99.12", "batches", returns_the_dataset, args)


def test_function_with_a_module_argument_records_its_gradients_and_runs_on_meta():
    rng = np.random.default_rng(5)
    arrays = {"ids": rng.integers(0, 5, size=(2, 3)), "state/table.weight": rng.normal(size=(5, 4)),
              "grad_seed": rng.normal(size=(2, 3, 4))}
    observed = probe(toy_lookup, Case("99.13", "call", "c", {}, arrays))
    assert set(observed) == {"looked_up", "after/ids", "grad/table.weight"}  # integer inputs watched too
    weight = torch.tensor(arrays["state/table.weight"], requires_grad=True)
    (2 * weight[torch.tensor(arrays["ids"])] * torch.tensor(arrays["grad_seed"])).sum().backward()
    assert np.allclose(observed["grad/table.weight"], weight.grad.numpy(), atol=1e-5)

    def detached(ids, table):
        return 2 * table(ids).detach()

    def rows_on_cpu(ids, table):
        rows = torch.arange(ids.shape[-1])  # no device=: breaks on a GPU
        return 2 * table(ids) + 0 * table(rows)

    assert verdict_of("99.13", "call", toy_lookup, arrays=arrays) is None
    assert "not connected to the autograd graph" in verdict_of("99.13", "call", detached, arrays=arrays)
    # A missing gradient is named as such even when a known mistake also has none.
    case = Case("99.13", "call", "c", {}, arrays)
    cut_off = dict(observed, **{"grad/table.weight": None})
    message = judge("99.13", case, cut_off, observed, [("the table is never used", cut_off)])
    assert message.startswith("The gradient reaching table.weight when the check backpropagates through your code: "
                              "no gradient reached it"), message
    assert verdict_of("99.13", "call", rows_on_cpu, arrays=arrays) is None
    on_meta = verdict_of("99.13", "call", rows_on_cpu, arrays=arrays, device=META)
    assert "a CPU tensor of shape (3,) meets the device's tensors" in on_meta, on_meta


def test_dict_and_list_differences_name_the_first_differing_entry():
    from gptcourse.checking.judge import _value_difference

    want = {f"w{i}": i for i in range(500)}
    missing = dict(want)
    del missing["w7"]
    message = _value_difference("Vocabulary", missing, want)
    assert message.startswith("Vocabulary: the key 'w7' is missing (expected 7)") and "499 entries, expected 500" in message
    assert len(message) < 200
    extra = dict(want, **{" ": 500})
    assert "the key ' ' should not be there (yours maps it to 500)" in _value_difference("V", extra, want)
    shifted = {k: v + 1 for k, v in want.items()}
    assert "['w0'] is 1, expected 0" in _value_difference("V", shifted, want)
    assert "499 other entries differ too" in _value_difference("V", shifted, want)
    assert _value_difference("Ids", [1, 2, 3, 9], [1, 2, 4]) == (
        "Ids: length 4, expected 3; first difference at index 2: yours 3, expected 4")
    assert _value_difference("Ids", [1, 2], [1, 2, 4]) == "Ids: length 2, expected 3; the missing items start with 4"


def test_array_differences_treat_infinities_as_values():
    """-inf where the reference has -inf is no difference; -inf against a number is named as such,
    never as a difference of inf between two -inf nor as the largest float."""
    from gptcourse.checking.judge import _value_difference

    inf = np.inf
    want = np.array([[-inf, 0.31, 2.0], [1.0, -inf, -inf]])
    got = np.array([[-inf, -inf, 2.0], [1.0, -inf, -inf]])
    message = _value_difference("Logits", got, want)
    assert message == ("Logits: not the expected values at 1 position, the first at index [0, 1]: "
                       "got -inf, expected 0.31"), message
    kept_too_many = np.array([[-inf, 0.31, 2.0], [1.0, 0.5, -inf]])
    assert "at index [1, 1]: got 0.5, expected -inf" in _value_difference("Logits", kept_too_many, want)
    both = np.array([[-inf, 0.31, 2.5], [1.0, -inf, -inf]])
    message = _value_difference("Logits", both, want)
    assert "largest difference 0.5 at index [0, 2] (yours 2.5, expected 2)" in message, message
    assert "inf" not in message and "e+308" not in message
    assert "got inf, expected -inf" in _value_difference("L", np.array([inf, 1.0]), np.array([-inf, 1.0]))
    # 0-d arrays (a loss) too.
    assert "largest difference 0.5 at index [] (yours 2.5, expected 2)" in _value_difference("L", np.array(2.5), np.array(2.0))
    assert "got -inf, expected 2" in _value_difference("L", np.array(-inf), np.array(2.0))


def test_file_round_trip_with_two_graded_names():
    arrays = {"w": np.arange(6.0).reshape(2, 3)}
    student = {"save_toy": save_toy, "load_toy": load_toy}

    def save_nothing(tensors, path):
        return path  # writes no file

    def load_transposed(path):
        return {k: v.T for k, v in torch.load(path, weights_only=True).items()}

    assert verdict_of("99.9", "file", student, {}, arrays) is None
    assert "did not write a file" in verdict_of("99.9", "file", {**student, "save_toy": save_nothing}, {}, arrays)
    assert "What was read back from the file" in verdict_of("99.9", "file", {**student, "load_toy": load_transposed}, {}, arrays)


# ------------------------------------------------------------------------------------------
# TrainingLoop (with an earlier task's name from the context), Sampler
# ------------------------------------------------------------------------------------------

def training_case(rng):
    arrays = linear_arrays(rng, batch=3, tokens=4, d_in=2, d_out=1)
    arrays["y"] = rng.normal(size=(3, 4, 1))
    return arrays


def test_training_loop_observes_parameters_calls_and_mode():
    arrays = training_case(np.random.default_rng(7))
    earlier = {"ToyLinear": ToyLinear}  # an earlier task's graded name, bound to the reference

    def no_zero_grad(model, batches, optimizer):
        losses = []
        for x, y in batches:
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    def ends_in_eval(model, batches, optimizer):
        losses = train_toy(model, batches, optimizer)
        model.eval()
        return losses

    assert verdict_of("99.10", "train", train_toy, {}, arrays, earlier=earlier) is None
    message = verdict_of("99.10", "train", no_zero_grad, {}, arrays, earlier=earlier)
    assert "optimizer.zero_grad() was called 0 times, expected 3" in message  # calls before their results

    def extra_zero_grad(model, batches, optimizer):
        optimizer.zero_grad()  # one more than needed: harmless
        return train_toy(model, batches, optimizer)

    assert verdict_of("99.10", "train", extra_zero_grad, {}, arrays, earlier=earlier) is None
    assert "The model's mode afterwards (model.training): expected True, got False" in verdict_of(
        "99.10", "train", ends_in_eval, {}, arrays, earlier=earlier)
    with pytest.raises(AssertionError, match="ToyLinear. is not defined"):
        verdict_of("99.10", "train", train_toy, {}, arrays)  # without the earlier name


def test_training_loop_spy_sees_the_mode_and_gradient_mode_of_every_forward_call():
    arrays = training_case(np.random.default_rng(8))
    earlier, args = {"ToyLinear": ToyLinear}, {"warmup": 1}

    def evaluates_in_train_mode(model, batches, optimizer, warmup):
        model.eval = lambda: model  # evaluation never leaves train mode
        return train_eval_toy(model, batches, optimizer, warmup)

    def evaluates_with_gradients(model, batches, optimizer, warmup):
        with patched_no_grad():
            return train_eval_toy(model, batches, optimizer, warmup)

    def trains_in_eval_mode(model, batches, optimizer, warmup):
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
            model.eval()  # and never model.train() again
            with torch.no_grad():
                losses.append(((model(x) - y) ** 2).mean().item())
        return losses

    assert verdict_of("99.16", "train", train_eval_toy, args, arrays, earlier=earlier) is None
    assert "ran in train mode: call model.eval()" in verdict_of(
        "99.16", "train", evaluates_in_train_mode, args, arrays, earlier=earlier)
    assert "with gradients on: evaluate inside `with torch.no_grad():`" in verdict_of(
        "99.16", "train", evaluates_with_gradients, args, arrays, earlier=earlier)
    assert "training steps ran with the model in eval mode" in verdict_of(
        "99.16", "train", trains_in_eval_mode, args, arrays, earlier=earlier)


class patched_no_grad:
    """torch.no_grad() that does nothing, for a loop that forgets it (restored on exit)."""

    def __enter__(self):
        self.original = torch.no_grad
        torch.no_grad = contextlib.nullcontext
        return self

    def __exit__(self, *exc):
        torch.no_grad = self.original


def test_training_loop_sees_the_rate_and_the_clipped_gradient_norm_of_every_step():
    rng = np.random.default_rng(9)
    arrays = training_case(rng)
    arrays["y"] = arrays["y"] * 50  # large errors: gradient norms well above 1
    earlier = {"ToyLinear": ToyLinear}
    case = Case("99.16", "train", "toy", {"warmup": 1}, arrays)
    observed = probe(train_eval_toy, case, earlier)
    assert observed["lr_per_step"] == [0.1, 0.05, 0.025]
    norms = observed["grad_norm_per_step"]
    assert norms[0] > 1 and norms[1:] == pytest.approx([1.0, 1.0], abs=1e-5)

    def never_clips(model, batches, optimizer, warmup):
        return train_eval_toy(model, batches, optimizer, warmup=len(batches))

    assert "The gradient norm at each optimizer step: first difference at index 1" in verdict_of(
        "99.16", "train", never_clips, {"warmup": 1}, arrays, earlier=earlier)


def test_repeated_records_one_result_per_call():
    args = {"calls": [[step, 4] for step in range(4)]}

    def off_by_one(step, total):
        return 1 - step / (total - 1)

    def as_tensor(step, total):
        return torch.tensor(1 - step / total, dtype=torch.float64)

    assert verdict_of("99.17", "rates", toy_rate, args) is None
    assert verdict_of("99.17", "rates", as_tensor, args) is None  # a 0-d tensor counts as its number
    message = verdict_of("99.17", "rates", off_by_one, args)
    assert "first difference at index 1" in message


def test_raises_on_call_wants_an_error_that_names_the_problem():
    args, arrays = {"shape": [2, 2]}, {"values": np.ones((2, 3))}

    def accepts(values, shape):
        return values.clone()

    def vague(values, shape):
        raise ValueError("shape mismatch")

    assert verdict_of("99.18", "raises", toy_checked_copy, args, arrays) is None
    assert verdict_of("99.18", "raises", accepts, args, arrays) == "values of the wrong shape were accepted"
    assert verdict_of("99.18", "raises", vague, args, arrays) == "the error does not name the values"


def test_an_accepted_alternative_reading_passes_and_the_message_stays_the_reference_s():
    args = {"values": [1.0, 2.0], "text": "a b"}

    def other_reading(values, text):
        return {**toy_stats(values, text), "count": 3}

    alternative = probe(other_reading, Case("99.4", "call", "toy", args, {}))
    assert verdict_of("99.4", "call", other_reading, args) is not None
    assert verdict_of("99.4", "call", other_reading, args, extras={"internals/alternatives": [alternative]}) is None
    wrong = verdict_of("99.4", "call", lambda values, text: {**toy_stats(values, text), "count": 4}, args,
                       extras={"internals/alternatives": [alternative]})
    assert "expected 2" in wrong


def test_an_earlier_name_the_probe_needs_but_cannot_find_is_named_with_its_task():
    """A probe that builds a model from an earlier task (p.name) when the notebook has none:
    the message says which task defines it (it used to say only 'ToyLinear is not defined')."""
    rng = np.random.default_rng(3)
    arrays = {"x": rng.normal(size=(2, 4, 2)), "y": rng.normal(size=(2, 4, 1)),
              "state/proj.weight": rng.normal(size=(1, 2)), "state/proj.bias": rng.normal(size=1),
              "state/pos.weight": rng.normal(size=(8, 1))}
    case = Case("99.10", "train", "a toy case", {}, arrays)
    expected = probe(train_toy, case, {"ToyLinear": ToyLinear})
    message = judge("99.10", case, probe(train_toy, case), expected)
    assert "ToyLinear is the graded name of task 99.1: run that task's cell first" in message


def test_sampler_names_the_known_wrong_distribution_the_counts_fit_best():
    probs = np.array([0.5, 0.3, 0.2, 0.0])
    args, arrays = {"num_outcomes": 4, "draws": 20000}, {"probs": probs}
    flat = np.array([0.25, 0.25, 0.25, 0.25])
    mistakes = [("the weights are squared", np.array([25, 9, 4, 0]) / 38), ("the zero is not filtered", flat),
                ("the flat one again, listed second", flat + np.array([1e-4, -1e-4, 0, 0]))]
    extras = {"internals/probs": probs, "internals/mistakes": mistakes}

    def squared(probs, n):
        return torch.multinomial(probs ** 2, n, replacement=True)

    def uniform(probs, n):
        return torch.randint(0, len(probs), (n,))

    assert verdict_of("99.11", "sample", sample_toy, args, arrays, extras) is None
    assert "it looks like the weights are squared" in verdict_of("99.11", "sample", squared, args, arrays, extras)
    # Counts at a zero probability that a known mistake explains get that mistake's message.
    assert "it looks like the zero is not filtered" in verdict_of("99.11", "sample", uniform, args, arrays, extras)


def test_a_wrong_sampler_is_named_from_internals_mistakes_never_from_the_known_mistakes():
    """docs/authoring.md's recipe: a known mistake of a random output goes into the task's `extras`
    as `internals/mistakes`. Among the grader's `mistakes` it can never match, not even with the
    very counts the student's code drew: the counts are the Sampler's own observation, judged by
    the kind, and the known mistakes are compared only with observations the judge compares."""
    probs = np.array([0.5, 0.3, 0.2, 0.0])
    case = Case("99.11", "sample", "a toy case", {"num_outcomes": 4, "draws": 20000}, {"probs": probs})

    def squared(probs, n):
        return torch.multinomial(probs ** 2, n, replacement=True)

    expected = dict(probe(sample_toy, case), **{"internals/probs": probs})
    got = probe(squared, case)
    as_a_known_mistake = judge("99.11", case, got, expected, [("the weights are squared", probe(squared, case))])
    assert as_a_known_mistake and "it looks like" not in as_a_known_mistake
    expected["internals/mistakes"] = [("the weights are squared", np.array([25, 9, 4, 0]) / 38)]
    assert "it looks like the weights are squared" in judge("99.11", case, got, expected)


def test_sampler_names_the_drawing_step_even_when_its_call_prepares_a_model_first(monkeypatch):
    def call(probe, fn):
        model = probe.module_input("model", nn.Linear(2, 2))  # names its own step
        return fn(probe.tensor("probs"), probe.case.args["draws"], model)

    def broken(probs, n, model):
        raise ValueError("no samples today")

    monkeypatch.setitem(TOY_SPECS, "99.11", TaskSpec({"sample": kinds.Sampler(call)}))
    case = Case("99.11", "sample", "a toy case", {"num_outcomes": 2, "draws": 10}, {"probs": np.array([0.5, 0.5])})
    error = probe(broken, case)["error"]
    assert error["step"] == "drawing samples with broken", error


def test_binomial_acceptance_is_exact_where_the_normal_approximation_is_not():
    """The interval's tails hold at most alpha together (checked by summing the pmf directly), and a
    rare outcome's interval is lopsided, as a binomial's is."""
    from math import comb

    n, prob, alpha = 400, 0.01, 1e-4
    low, high = kinds.binomial_acceptance(n, prob, alpha)
    pmf = [comb(n, k) * prob ** k * (1 - prob) ** (n - k) for k in range(n + 1)]
    assert sum(pmf[:low]) <= alpha / 2 and sum(pmf[high + 1:]) <= alpha / 2
    assert sum(pmf[:low + 1]) > alpha / 2 and sum(pmf[high:]) > alpha / 2  # the tightest such interval
    assert high - n * prob > n * prob - low  # skewed: more room above the mean than below
    assert kinds.binomial_acceptance(50, 0.0, alpha) == (0, 0) and kinds.binomial_acceptance(50, 1.0, alpha) == (50, 50)


def test_sampler_is_judged_statistically():
    probs = np.array([0.5, 0.3, 0.2, 0.0])
    args, arrays = {"num_outcomes": 4, "draws": 4000}, {"probs": probs}
    extras = {"internals/probs": probs}

    def by_inverse_cdf(probs, n):
        """Correct, with other random numbers than torch.multinomial's."""
        return torch.searchsorted(torch.cumsum(probs, 0), torch.rand(n, dtype=probs.dtype) * probs.sum(), right=True)

    def greedy(probs, n):
        return torch.full((n,), int(torch.argmax(probs)))

    def uniform(probs, n):
        return torch.randint(0, len(probs), (n,))

    assert verdict_of("99.11", "sample", sample_toy, args, arrays, extras) is None
    assert verdict_of("99.11", "sample", by_inverse_cdf, args, arrays, extras, dtype="float64") is None
    assert "do not follow the right distribution" in verdict_of("99.11", "sample", greedy, args, arrays, extras)
    assert "its probability is 0" in verdict_of("99.11", "sample", uniform, args, arrays, extras)


# ------------------------------------------------------------------------------------------
# ModuleForward's initial values, ModuleSize, and a Function that drives a model
# ------------------------------------------------------------------------------------------

def scaled_arrays(rng, dim=3):
    return {"x": rng.normal(size=(2, dim)), "grad_seed": rng.normal(size=(2, dim)),
            "state/scale": rng.normal(size=dim), "state/more.0.weight": rng.normal(size=(dim, dim)),
            "state/more.0.bias": rng.normal(size=dim)}


class ScaledStartsAtZero(ToyScaled):
    def __init__(self, dim, layers=1):
        super().__init__(dim, layers)
        nn.init.zeros_(self.scale)


class ScaledSharedLayers(ToyScaled):
    """The same layer object repeated: model.parameters() counts it once."""

    def __init__(self, dim, layers=1):
        super().__init__(dim, layers)
        self.more = nn.Sequential(*[self.more[0]] * layers)


class ScaledHuge(ToyScaled):
    """Would need about 40 GB if it were really allocated."""

    def __init__(self, dim, layers=1):
        super().__init__(dim, layers)
        self.huge = nn.Linear(100_000, 100_000)


def test_initial_values_are_recorded_before_the_test_weights_replace_them():
    arrays = scaled_arrays(np.random.default_rng(0))
    assert verdict_of("99.14", "forward", ToyScaled, {"dim": 3}, arrays) is None
    message = verdict_of("99.14", "forward", ScaledStartsAtZero, {"dim": 3}, arrays)
    assert "initial value of scale" in message


def test_module_size_counts_on_meta_without_allocating():
    args = {"dim": 4, "layers": 3}
    assert verdict_of("99.14", "size", ToyScaled, args) is None
    assert "Number of parameters" in verdict_of("99.14", "size", ScaledSharedLayers, args)
    observed = probe(ScaledHuge, Case("99.14", "size", "a toy case", args, {}))
    assert observed["num_parameters"] == 4 + 3 * 20 + 100_000 * 100_001  # counted, never allocated
    assert observed["children_parameters"]["huge"] == 100_000 * 100_001


def toy_extend_with_grad(model, ids, steps):
    for _ in range(steps):
        ids = torch.cat((ids, model(ids)[:, -1:].argmax(dim=-1)), dim=1)
    return ids


def toy_extend_in_place(model, ids, steps):
    ids[:, 0] = 0
    return toy_extend(model, ids, steps)


def toy_extend_ids_on_cpu(model, ids, steps):
    for _ in range(steps):
        with torch.no_grad():
            nxt = model(ids)[:, -1:].argmax(dim=-1)
        ids = torch.cat((ids, nxt + torch.zeros(ids.shape[0], 1, dtype=torch.long)), dim=1)  # no device=
    return ids


def test_a_function_that_drives_a_model_records_what_the_model_saw():
    args, arrays = {"steps": 3}, {"ids": np.array([[1, 2], [3, 4]])}
    assert verdict_of("99.15", "call", toy_extend, args, arrays) is None
    assert "calls_with_grad" in verdict_of("99.15", "call", toy_extend_with_grad, args, arrays)
    assert "changed its input ids in place" in verdict_of("99.15", "call", toy_extend_in_place, args, arrays)
    case = Case("99.15", "call", "a toy case", args, arrays, "float32", META)
    assert device_pass_supported(case)
    assert "a CPU tensor of shape" in probe(toy_extend_ids_on_cpu, case)["error"]["message"]


# ------------------------------------------------------------------------------------------
# ModuleSteps: a module with state, driven by a script of calls
# ------------------------------------------------------------------------------------------

def running_mean_case(rng, raises=True):
    x, x2 = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 4, 3))
    cached = {"use_cache": True}
    steps = [{"feed": [0, 1], "kwargs": cached}, {"feed": [1, 3], "kwargs": cached}, {"feed": [3, 5], "kwargs": cached},
             {"call": "reset_cache"}, {"none": ["cache_sum"]},
             {"feed": [0, 4], "array": "x2", "kwargs": cached}, {"feed": [0, 5], "kwargs": {"use_cache": False}}]
    if raises:
        steps.append({"feed": [0, 2], "array": "x2", "kwargs": cached, "raises": True})
    arrays = {"x": x, "x2": x2, "state/scale": rng.normal(size=3)}
    return {"dim": 3, "limit": 5, "steps": steps}, arrays


class RunningMeanForgetsTheCache(ToyRunningMean):
    def forward(self, x, use_cache=False):
        return super().forward(x, use_cache=False)


class RunningMeanKeepsAfterReset(ToyRunningMean):
    def reset_cache(self):
        self.seen = 0


class RunningMeanNoLimit(ToyRunningMean):
    """Never checks the limit: a later shape error instead of its own."""

    def forward(self, x, use_cache=False):
        if use_cache and self.seen + x.shape[1] > self.limit:
            return x @ torch.ones(x.shape[1], 2)  # fails inside torch: (.., 3) @ (2, 2)
        return super().forward(x, use_cache)


class RunningMeanAssertsTheLimit(ToyRunningMean):
    """Correct: an assert is a deliberate check too."""

    def forward(self, x, use_cache=False):
        assert not use_cache or self.seen + x.shape[1] <= self.limit, "the cache is full"
        return super().forward(x, use_cache)


class RunningMeanCountsOnTheCpu(ToyRunningMean):
    """Right numbers on the CPU; the positions are made on the CPU whatever the input's device."""

    def forward(self, x, use_cache=False):
        out = super().forward(x, use_cache)
        return out * torch.ones(x.shape[1], 1)


class RunningMeanBufferOnTheCpu(ToyRunningMean):
    """Right numbers on the CPU; the tokens are kept in a buffer made without device= and filled
    by slice assignment (a copy_ into a CPU tensor, which a GPU accepts: the mix comes later)."""

    def forward(self, x, use_cache=False):
        if not use_cache:
            return super().forward(x)
        start = self.seen
        if start + x.shape[1] > self.limit:
            raise ValueError(f"past the limit of {self.limit} tokens")
        if self.cache_sum is None:
            self.cache_sum = torch.zeros(x.shape[0], self.limit, x.shape[2], dtype=x.dtype)
        self.cache_sum[:, start:start + x.shape[1]] = x
        self.seen = start + x.shape[1]
        total = torch.cumsum(self.cache_sum[:, :self.seen], dim=1)[:, start:]
        count = torch.arange(start + 1, self.seen + 1, device=x.device, dtype=x.dtype).view(1, -1, 1)
        return self.scale * total / count


def test_module_steps_reference_and_a_correct_alternative_pass():
    args, arrays = running_mean_case(np.random.default_rng(0))
    assert verdict_of("99.19", "steps", ToyRunningMean, args, arrays) is None
    assert verdict_of("99.19", "steps", RunningMeanAssertsTheLimit, args, arrays) is None
    observed = probe(ToyRunningMean, Case("99.19", "steps", "a toy case", args, arrays))
    assert observed["step 5: cache_sum is None"] == {"cache_sum": True}
    assert observed["step 8: tokens 0 to 1, use_cache=True (past the end: must raise)"] == {
        "raised": True, "by_your_code": True}


def test_module_steps_names_the_call_that_went_wrong():
    args, arrays = running_mean_case(np.random.default_rng(1))
    message = verdict_of("99.19", "steps", RunningMeanForgetsTheCache, args, arrays)
    assert message.startswith("the output of step 2 (tokens 1 to 2, use_cache=True)"), message
    message = verdict_of("99.19", "steps", RunningMeanKeepsAfterReset, args, arrays)
    assert message.startswith("after step 5, whether cache_sum is None"), message


def test_module_steps_tells_a_deliberate_error_from_one_inside_torch():
    args, arrays = running_mean_case(np.random.default_rng(2))
    message = verdict_of("99.19", "steps", RunningMeanNoLimit, args, arrays)
    assert "past the end: it must raise" in message and "failed inside PyTorch" in message, message


def test_module_steps_tells_a_deliberate_error_from_code_without_readable_source():
    """Code run from a string (no source lines to read): its own raise past the limit is a deliberate
    check, whatever the exception's type; a shape error inside torch is still not."""
    namespace = {"ToyRunningMean": ToyRunningMean, "torch": torch}
    exec(compile("class FromString(ToyRunningMean):\n"
                 "    def forward(self, x, use_cache=False):\n"
                 "        if use_cache and self.seen + x.shape[1] > self.limit:\n"
                 "            raise RuntimeError('the cache is full')\n"
                 "        return super().forward(x, use_cache)\n"
                 "class ShapeErrorFromString(ToyRunningMean):\n"
                 "    def forward(self, x, use_cache=False):\n"
                 "        if use_cache and self.seen + x.shape[1] > self.limit:\n"
                 "            return x @ torch.ones(x.shape[1], 2)\n"
                 "        return super().forward(x, use_cache)\n", "<string>", "exec"), namespace)
    args, arrays = running_mean_case(np.random.default_rng(5))
    assert verdict_of("99.19", "steps", namespace["FromString"], args, arrays) is None
    message = verdict_of("99.19", "steps", namespace["ShapeErrorFromString"], args, arrays)
    assert "failed inside PyTorch" in message, message


def test_module_steps_runs_on_meta_to_find_tensors_made_on_the_cpu():
    args, arrays = running_mean_case(np.random.default_rng(3), raises=False)
    case = Case("99.19", "steps", "a toy case", args, arrays, "float32", "meta")
    assert "error" not in probe(ToyRunningMean, case)
    assert "cpu" in probe(RunningMeanCountsOnTheCpu, case)["error"]["message"].lower()


def test_device_pass_counts_writing_the_devices_values_into_a_cpu_tensor_as_the_mix():
    """On meta the copy into the CPU buffer fails by itself (an error the device pass would ignore):
    it must be reported as the device mix it is."""
    args, arrays = running_mean_case(np.random.default_rng(4), raises=False)
    assert verdict_of("99.19", "steps", RunningMeanBufferOnTheCpu, args, arrays) is None  # right numbers
    case = Case("99.19", "steps", "a toy case", args, arrays, "float32", "meta")
    error = probe(RunningMeanBufferOnTheCpu, case)["error"]
    assert "writes the device's values into a CPU tensor" in error["message"], error
    assert "register_buffer" in error["message"]  # a module: the advice speaks of its buffers
    # Values from the CPU written into the device's tensors stay allowed (CUDA accepts them).
    from gptcourse.checking.probes import _DeviceMixGuard, load_meta_kernels

    load_meta_kernels()
    on_meta = torch.zeros(2, 3, device=META)
    with _DeviceMixGuard():
        on_meta.copy_(torch.ones(2, 3))
        on_meta[:, 0:2] = torch.ones(2, 2)
        on_meta[torch.tensor([0])] = torch.ones(1, 3)


def test_a_chapter_error_hint_can_depend_on_the_step_and_the_students_line(monkeypatch):
    from gptcourse.checking.judge import describe_error

    module = sys.modules[f"gptcourse.checking.chapters.ch{TOY}"]
    monkeypatch.setattr(module, "ERROR_HINTS", [
        (r".", "the call without the cache went wrong", ("99.19",), {"step": r"use_cache=False"}),
        (r".", "a deliberate refusal of a chunk that fits", ("99.19",), {"step": r"use_cache=True",
                                                                          "where": r"\b(raise|assert)\b"}),
        (r"size of tensor", "a shape error", ("99.19",)),
    ], raising=False)

    def error(step, where, message="The size of tensor a (7) must match the size of tensor b (13)"):
        return {"type": "RuntimeError", "message": message, "step": step, "where": where, "ours": False}

    without = error("calling forward on tokens 0 to 5, use_cache=False (step 13)", "line 49: s = s.masked_fill(m, 0)")
    assert describe_error(without, "99.19").endswith("— the call without the cache went wrong")
    refused = error("calling forward on tokens 0 to 2, use_cache=True (step 9)", "line 35: assert self.pos <= 7")
    assert describe_error(refused, "99.19").endswith("— a deliberate refusal of a chunk that fits")
    inside_torch = error("calling forward on tokens 0 to 2, use_cache=True (step 9)", "line 49: s = s.masked_fill(m, 0)")
    assert describe_error(inside_torch, "99.19").endswith("— a shape error")


def test_sampling_hands_generate_the_prompt_on_the_models_device():
    # On CUDA the prompt stayed on the CPU while the model ran on the GPU, so every generate
    # failed in torch.cat: no student could pass 6.4 there. meta stands in for the GPU here
    # (the kind itself, called directly: the grader runs sampling cases on meta not at all).
    from gptcourse.checking.probes import Probe, kind_of
    from grader.chapters import hidden_cases

    case = next(c for c in hidden_cases("6.4", 1) if c.kind == "sample").on(META)
    seen = {}

    def generate(model, idx, max_new_tokens, context_size, **options):
        seen["prompt"], seen["model"] = idx.device, next(model.parameters()).device
        raise RuntimeError("stop here")

    probe = Probe(case, ProbeContext().for_case(case, {"generate": generate}))
    with pytest.raises(RuntimeError, match="stop here"):
        kind_of(case).probe(probe)
    assert seen == {"prompt": torch.device("meta"), "model": torch.device("meta")}


def test_a_probe_has_fixed_attributes_and_keeps_callback_data_by_name():
    """What one callback leaves for a later one goes in p.kept; an attribute set on the probe
    itself (a typo, or a chapter module's private state) fails at once instead of lingering."""
    from gptcourse.checking.probes import Probe

    case = Case("99.4", "call", "c", {"values": [1], "text": "a"})
    probe = Probe(case, ProbeContext().for_case(case, {"toy_stats": toy_stats}))
    probe.kept["model"] = "kept"
    assert probe.kept == {"model": "kept"}
    with pytest.raises(AttributeError):
        probe.model = "lingering"


def test_the_device_mix_message_is_short_and_speaks_to_a_function_or_a_module():
    """A function is told about the tensors it makes and moves, a module about forward and buffers;
    neither message repeats itself (it was about 120 words, with forward and register_buffer for
    plain functions such as generate)."""
    from gptcourse.checking.probes import _device_mix_message

    stray = torch.zeros(2, 3)
    for write in (False, True):
        function = _device_mix_message(torch.ops.aten.cat.default, stray, write=write, module=False)
        module = _device_mix_message(torch.ops.aten.cat.default, stray, write=write, module=True)
        assert "forward" not in function and "register_buffer" not in function and ".to(device)" in function
        assert "register_buffer" in module and "forward" in module
        for message in (function, module):
            assert len(message.split()) <= 75, message
            assert message.count("Expected all tensors to be on the same device") == 1
    named = _device_mix_message(torch.ops.aten.cat.default, stray, input_name="input_batch", module=False)
    assert "input_batch.to(device)" in named and len(named.split()) <= 50


def kinds_in_the_authoring_table():
    """The kinds docs/authoring.md's table lists (the first cell of each row: `Name(arguments)`)."""
    from factory import REPO

    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = text[text.index("### Kinds ("):]
    section = section[:section.index("\n#", 1)]
    return {match for match in re.findall(r"^\| `(\w+)\(", section, re.MULTILINE)}


def test_the_authoring_guide_lists_every_kind():
    """A chapter author picks kinds from docs/authoring.md's table: a kind missing there (ModuleSize
    was) is one nobody finds; a row for a kind that is gone misleads."""
    exported = {name for name in kinds.__all__
                if isinstance(getattr(kinds, name), type) and issubclass(getattr(kinds, name), kinds.Kind)
                and getattr(kinds, name) is not kinds.Kind}
    assert len(exported) >= 12, exported
    assert kinds_in_the_authoring_table() == exported
