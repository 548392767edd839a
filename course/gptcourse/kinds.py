"""Kinds of task: small, reusable ways of exercising a student's code.

A chapter module (chapters/chNN_name.py) gives each of its tasks a probe per case kind by
picking one of these and filling in what is specific: how to build the constructor's or the
call's arguments from a case, which attributes the spec pins down, how to judge a random
output. A kind knows nothing about any particular task.

| kind            | exercises                                   | observations                         |
|-----------------|---------------------------------------------|--------------------------------------|
| ModuleForward   | an nn.Module: build, load weights by name, | structure, out, out_again, after/x,   |
|                 | forward in eval mode, gradients, causality | grad/x, grad/<param>, ...            |
| ModuleDropout   | the same module in train mode, several runs | train_<i> (judged by the chapter),   |
|                 |                                             | out_eval, out_eval_again             |
| ModuleSize      | an nn.Module at full size, built on meta    | num_parameters, children_parameters  |
| RaisesOnConstruct | a constructor that must refuse arguments  | raises                               |
| Function        | a pure function on values built from a case | the returned values, after/<input>,  |
|                 | (tensors, token ids, text, lists, dicts)   | grad/<input>                          |
| Methods         | a class: construct, then a list of calls    | call_<i>/<method>                    |
| Dataset         | a Dataset: len and selected items           | len, item_types, item/<i>            |
| Loader          | a function that returns a DataLoader        | num_batches, sampler, batch/<i>,     |
|                 |                                             | batch_shapes, windows (sorted)       |
| FileRoundTrip   | a writer and a reader, through a file       | file_written, read_back              |
| TrainingLoop    | a training function on a small model        | returned, optimizer_calls,           |
|                 |                                             | training_mode_after, param/<name>    |
| Sampler         | a random sampler, drawn many times          | num_draws, counts (judged            |
|                 |                                             | statistically)                       |

Every kind has:
- `probe(p)`: run the code on the case held by the probe `p` (probes._Probe) and record;
- `device_pass`: whether the case is run once more on the meta device (see probes.py);
- `messages`: observation key -> the message when that observation is wrong;
- `owns(key)` / `judge_key(key, got, expected, case)`: observations the kind judges itself
  (random outputs) instead of comparing them with the reference's;
- `hints`: functions (key, got, expected, case) -> a property hint ("" when it does not apply).
"""
import contextlib
import functools
import io
import math
import os
import re
import traceback

import numpy as np
import torch

from .probes import ProbeFailure


class Kind:
    device_pass = False
    messages = {}
    hints = ()

    def probe(self, p):
        raise NotImplementedError

    def owns(self, key):
        return False

    def judge_key(self, key, got, expected, case):
        return None


def _same(a, b, atol=1e-5, rtol=1e-4):
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)))


def eval_mode_hint(key, got, expected, case):
    """Two eval-mode calls that disagree: dropout (or other randomness) is still on."""
    again = {"out": "out_again", "out_eval": "out_eval_again"}.get(key)
    if again and isinstance(got.get(key), np.ndarray) and isinstance(got.get(again), np.ndarray):
        if got[key].shape == got[again].shape and not _same(got[key], got[again]):
            return ("two calls in eval mode gave different outputs: after module.eval() dropout must "
                    "do nothing. nn.Dropout switches itself off; F.dropout needs training=self.training")
    return ""


def causal_prefix_hint(key, got, expected, case):
    if key == "out_future_prefix" and isinstance(got.get("out"), np.ndarray):
        t = case.args["causal_t"]
        if not _same(got["out"][:, : t + 1], got[key]):
            return ("the output at early positions changed when only later tokens changed: the "
                    "causal mask is not applied (is the result of masked_fill assigned?)")
    return ""


def _describe_call(p, positional, keywords):
    """'attn_scores, d_k=2': inputs by their case name, other values by a short repr."""
    names = {id(given): name for name, (_, given) in p.inputs.items()}

    def show(value):
        if id(value) in names:
            return names[id(value)]
        text = repr(value) if not isinstance(value, torch.Tensor) else f"a tensor of shape {tuple(value.shape)}"
        return text if len(text) <= 40 else text[:37] + "..."

    return ", ".join([show(v) for v in positional] + [f"{k}={show(v)}" for k, v in keywords.items()])


# ------------------------------------------------------------------------------------------
# Modules
# ------------------------------------------------------------------------------------------

class ModuleForward(Kind):
    """An nn.Module in eval mode: outputs, gradients, attribute layout, causality.

    construct(args) -> (positional, keywords) for the constructor, from the case's args.
    attributes: the attribute names the spec pins down; describe: name -> fn(module, case)
    for attributes that need more than probes.describe_attribute (a mask's pattern).
    same_in_train_mode(args) -> bool: also record a train-mode output that must equal the
    eval one (dropout=0.0). The case may hold x_future (same tokens up to causal_t, others
    after it): a causal module's output up to causal_t must not change.
    initial_values: parameters whose values right after construction the spec pins down
    (LayerNorm's scale of ones): recorded as init/<name> before the test's weights replace them.
    """

    device_pass = True

    def __init__(self, construct, attributes=(), describe=None, same_in_train_mode=None,
                 extra_parameters_hint="", initial_values=()):
        from .probes import describe_attribute

        self.construct = construct
        self.initial_values = tuple(initial_values)
        self.attributes = tuple(attributes)
        self.describe = {name: (lambda m, case, n=name: describe_attribute(m, n)) for name in self.attributes}
        self.describe.update(describe or {})
        self.same_in_train_mode = same_in_train_mode or (lambda args: False)
        self.messages = {"extra_parameters": "your module has parameters the spec does not have"
                                             + (f" ({extra_parameters_hint})" if extra_parameters_hint else "")}
        self.hints = (eval_mode_hint, causal_prefix_hint)

    def probe(self, p):
        positional, keywords = self.construct(p.case.args)
        module = p.construct(p.obj, positional, keywords)
        if self.attributes and not p.meta:
            p.step = "inspecting your module's attributes"
            p.obs["structure"] = {name: self.describe[name](module, p.case) for name in self.attributes}
        if self.initial_values and not p.meta:
            p.record_initial_values(module, self.initial_values)
        p.load_state(module)
        p.prepare(module, train=False)

        x = p.input("x", requires_grad=np.asarray(p.case.arrays["x"]).dtype.kind == "f")
        p.step = "running forward in eval mode"
        out = module(x)
        p.record("out", out, "the output of forward")
        if p.meta:
            # The device pass needs each code path once, not the numbers: eval, then train mode.
            p.step = "running forward in train mode"
            module.train()
            with torch.no_grad():
                module(p.tensor("x"))
            return
        p.record_inputs_after()
        p.step = "running forward in eval mode a second time"
        with torch.no_grad():
            p.record("out_again", module(p.tensor("x")), "the output of forward")
        p.step = "backpropagating from the output"
        p.backward(out)
        p.record_input_grads()
        p.record_parameter_grads(module)

        if "x_future" in p.case.arrays:
            t = p.case.args["causal_t"]
            p.step = "running forward on an input whose tokens after position t were changed"
            with torch.no_grad():
                out_future = module(p.tensor("x_future"))
            p.record("out_future_prefix", out_future[:, : t + 1], "the output of forward")

        if self.same_in_train_mode(p.case.args):
            p.step = "running forward in train mode"
            module.train()
            with torch.no_grad():
                p.record("out_train", module(p.tensor("x")), "the output of forward")


class ModuleDropout(Kind):
    """The module in train mode, several passes, then eval mode again.

    Which train-mode outputs are right depends on where dropout belongs, so the chapter
    gives `train_judge(got, expected, case) -> message or None`; it sees the whole
    observations (train_0, train_1, ...) and whatever the hidden side added to `expected`.
    """

    def __init__(self, construct, train_judge, passes=3):
        self.construct = construct
        self.train_judge = train_judge
        self.passes = passes
        self.hints = (eval_mode_hint,)

    def probe(self, p):
        positional, keywords = self.construct(p.case.args)
        module = p.construct(p.obj, positional, keywords)
        p.load_state(module)
        p.prepare(module, train=True)
        x = p.tensor("x")
        with torch.no_grad():
            for i in range(self.passes):
                p.step = f"running forward in train mode (pass {i + 1})"
                p.record(f"train_{i}", module(x), "the output of forward")
            p.step = "running forward in eval mode after training mode"
            module.eval()
            p.record("out_eval", module(x), "the output of forward")
            p.record("out_eval_again", module(x), "the output of forward")

    def owns(self, key):
        return key.startswith("train_")

    def judge_key(self, key, got, expected, case):
        return self.train_judge(got, expected, case) if key == "train_0" else None


class ModuleSize(Kind):
    """How many parameters a module has, at full size, for free: it is built on PyTorch's meta
    device (shapes only, nothing allocated), so GPT-2's 163 million parameters cost nothing.

    construct(args) -> (positional, keywords). Recorded: num_parameters (each tensor counted
    once, as model.parameters() yields it: shared weights count once) and the count of each
    top-level child (children_parameters), which locates a difference.
    """

    def __init__(self, construct):
        self.construct = construct

    def probe(self, p):
        positional, keywords = self.construct(p.case.args)
        with torch.device("meta"):
            module = p.construct(p.obj, positional, keywords)
        p.step = "counting your module's parameters"
        p.record_value("num_parameters", sum(t.numel() for t in module.parameters()),
                       "the number of parameters")
        p.record_value("children_parameters",
                       {name: sum(t.numel() for t in child.parameters()) for name, child in module.named_children()},
                       "the number of parameters of each part")


class ModuleSteps(Kind):
    """A module with state (a cache, say), driven by a script of calls; every result recorded.

    construct(args) -> (positional, keywords). The module gets the case's weights (state/...)
    and is put in eval mode; the calls run without gradients. With `train_judge` the module runs
    in train mode instead: its outputs are random (dropout), so they are owned by the kind and
    judged together by train_judge(got, expected, case) -> message or None (the keys say
    "(train mode)"; `fed_chunks(case)` lists them with the positions they cover).
    args["steps"] is the script:
    - {"feed": [start, end]}: call the module on x[:, start:end] (another case array with
      "array": name), with "kwargs" (default {}); the output is recorded under a key that says
      which call it was ("call 2: tokens 1 to 3, use_cache=True");
    - {"call": method}: call a method without arguments (reset_cache); nothing recorded;
    - {"none": [attribute, ...]}: record which of the attributes are None;
    - {"feed": [...], "raises": true}: the call must refuse; recorded: whether it raised, and
      whether the exception came from the student's own code (a deliberate check: raise or
      assert) rather than from inside PyTorch (a shape error further down). The script stops
      there: the state after a refused call is not pinned down.
    On the meta device (the device pass) the calls run, and nothing is recorded.
    """

    device_pass = True
    REFUSAL = " (past the end: must raise)"  # ends the key of a call that must raise

    def __init__(self, construct, train_judge=None):
        self.construct = construct
        self.train_judge = train_judge
        self.hints = (refusal_hint,)

    def probe(self, p):
        positional, keywords = self.construct(p.case.args)
        module = p.construct(p.obj, positional, keywords)
        p.load_state(module)
        p.prepare(module, train=self.train_judge is not None)
        with torch.no_grad():
            for i, step in enumerate(p.case.args["steps"]):
                if not self._run_step(p, module, i + 1, step):
                    break

    TRAIN_MODE = " (train mode)"  # in the key of a call made in train mode

    def _feed_key(self, number, step):
        """'step 3: tokens 1 to 3, use_cache=True' (with ' (train mode)' after the number in train mode)."""
        start, end = step["feed"]
        mode = self.TRAIN_MODE if self.train_judge is not None else ""
        return (f"step {number}{mode}: tokens {start} to {end - 1}"
                + "".join(f", {k}={v}" for k, v in step.get("kwargs", {}).items()))

    def fed_chunks(self, case):
        """[(observation key, (start, end))] of the script's calls that must work, in order."""
        return [(self._feed_key(i + 1, step), tuple(step["feed"])) for i, step in enumerate(case.args["steps"])
                if "feed" in step and not step.get("raises")]

    def owns(self, key):
        return self.train_judge is not None and self.TRAIN_MODE + ":" in key and not key.endswith(self.REFUSAL)

    def judge_key(self, key, got, expected, case):
        """All train-mode outputs are judged together, at the first of them."""
        first = next(k for k, _ in self.fed_chunks(case))
        return self.train_judge(got, expected, case) if key == first else None

    def _run_step(self, p, module, number, step):
        """Run one step; False when the script stops here."""
        if "call" in step:
            p.step = f"calling .{step['call']}() (step {number})"
            method = getattr(module, step["call"], None)
            if not callable(method):
                raise ProbeFailure(f"{type(module).__name__} has no method {step['call']}()")
            method()
            return True
        if "none" in step:
            p.step = f"looking at {', '.join(step['none'])} (step {number})"
            if not p.meta:
                p.record_value(f"step {number}: " + ", ".join(f"{name} is None" for name in step["none"]),
                               {name: getattr(module, name, "missing") is None for name in step["none"]},
                               "which attributes are None")
            return True
        start, end = step["feed"]
        kwargs = step.get("kwargs", {})
        x = p.tensor(step.get("array", "x"))[:, start:end]
        what = self._feed_key(number, step)
        p.step = f"calling forward on {what.split(': ', 1)[1]} (step {number})"
        if not step.get("raises"):
            output = module(x, **kwargs)
            if not p.meta:
                p.record(what, output, "the output")
            return True
        if p.meta:
            return False
        try:
            module(x, **kwargs)
        except Exception as error:  # any exception counts; where it came from is recorded
            p.record_value(what + self.REFUSAL, {"raised": True, "by_your_code": raised_by_student(error)},
                           "whether it raised")
        else:
            p.record_value(what + self.REFUSAL, {"raised": False, "by_your_code": False}, "whether it raised")
        return False


def refusal_hint(key, got, expected, case):
    """A call that had to be refused: accepted, or refused by a failure inside PyTorch."""
    have = got.get(key)
    if not key.endswith(ModuleSteps.REFUSAL) or not isinstance(have, dict):
        return ""
    if not have.get("raised"):
        return "the call was accepted: it goes past the module's limit and must raise an error"
    if not have.get("by_your_code"):
        return ("it failed inside PyTorch (a shape error further down) instead of with an error of your own: "
                "check the size before using it, and raise an error that says what is wrong")
    return ""


def raised_by_student(error):
    """Whether the error was raised on purpose by the student's code: the innermost frame of its
    traceback is outside the libraries (torch, numpy, the course package) and its line is a
    `raise` or an `assert`. A PyTorch operation that fails (a shape error in masked_fill) has the
    student's line as its innermost Python frame too, but that line is the operation."""
    from .probes import is_library_path

    frames = traceback.extract_tb(error.__traceback__)
    if not frames or is_library_path(frames[-1].filename):
        return False
    if not frames[-1].line:  # no source to read (code run from a string): the instruction that raised
        return _raised_by_raise_statement(error)
    return bool(re.search(r"\b(raise|assert)\b", frames[-1].line))


def _raised_by_raise_statement(error):
    """Whether the innermost frame raised with a `raise` or an `assert` (RAISE_VARARGS), rather than
    an operation that failed (a call into torch, an index)."""
    import dis

    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    instruction = next((i for i in dis.get_instructions(tb.tb_frame.f_code) if i.offset == tb.tb_lasti), None)
    return instruction is not None and instruction.opname in ("RAISE_VARARGS", "RERAISE")


class RaisesOnConstruct(Kind):
    """A constructor that must refuse its arguments (any exception counts)."""

    def __init__(self, construct, message):
        self.construct = construct
        self.messages = {"raises": message}

    def probe(self, p):
        positional, keywords = self.construct(p.case.args)
        try:
            p.construct(p.obj, positional, keywords, module=False)
        except Exception:  # any exception is the requested behaviour here
            p.obs["raises"] = True
        else:
            p.obs["raises"] = False


class RaisesOnCall(Kind):
    """A function that must refuse what the case gives it, with a message that says why.

    call(p) -> (positional, keywords). Recorded: `raised` (any exception counts) and, when
    message_ok(message, case) is given, `message_ok`: whether "Type: message" says what it
    must (names the offending tensor, say). messages: feedback for `raised` and `message_ok`.
    """

    def __init__(self, call, message_ok=None, messages=None, name=None):
        self.call = call
        self.message_ok = message_ok
        self.messages = dict(messages or {})
        self.name = name

    def probe(self, p):
        fn = p.name(self.name) if self.name else p.obj
        positional, keywords = self.call(p)
        p.step = f"calling {getattr(fn, '__name__', 'your function')}({_describe_call(p, positional, keywords)})"
        try:
            fn(*positional, **keywords)
        except Exception as error:  # any exception is the requested behaviour here
            p.record_value("raised", True, "whether the call raised")
            if self.message_ok:
                text = f"{type(error).__name__}: {error}"
                p.record_value("message_ok", bool(self.message_ok(text, p.case)), "whether the message says why")
        else:
            p.record_value("raised", False, "whether the call raised")


# ------------------------------------------------------------------------------------------
# Functions and classes
# ------------------------------------------------------------------------------------------

class Function(Kind):
    """A function called once on values built from the case; every returned value recorded.

    call(p) -> (positional, keywords): use p.input(name, requires_grad) for the case's arrays
    (watched for in-place changes, gradients taken from them), p.case.args for plain values
    (numbers, text, nested lists), p.ctx for the tokenizer, earlier names or files.
    outputs: a key per returned value, or (key, description) pairs; with more than one the
    function must return a tuple of that length. tensors: the outputs must be tensors (the
    feedback says so when they are not); otherwise any plain value is recorded. grad_of: the
    output to backpropagate from (with the case's grad_seed); gradients of the inputs that
    require grad are recorded. name: the graded name to call (default: the task's first).
    device_pass: run once more on the meta device (default: when the outputs are tensors).
    also(p): record more observations after the call (what a model passed in saw, say; the
    returned value is p.result).
    scalars: a returned 0-d tensor is recorded as a Python number (a mean loss may be either).
    """

    def __init__(self, call, outputs=("result",), tensors=False, grad_of=None, name=None, device_pass=None,
                 also=None, scalars=False):
        self.call = call
        self.scalars = scalars
        self.also = also
        self.outputs = [(o, f"the returned {o}") if isinstance(o, str) else tuple(o) for o in outputs]
        self.tensors = tensors
        self.grad_of = grad_of
        self.name = name
        self.device_pass = tensors if device_pass is None else device_pass

    def probe(self, p):
        fn = p.name(self.name) if self.name else p.obj
        fn_name = getattr(fn, "__name__", self.name or "your function")
        positional, keywords = self.call(p)
        p.step = f"calling {fn_name}({_describe_call(p, positional, keywords)})"
        result = fn(*positional, **keywords)
        p.result = result  # for also(p)
        values = self._split(result, fn_name)
        for (key, what), value in zip(self.outputs, values):
            if self.scalars:
                value = as_number(value)
            (p.record if self.tensors else p.record_value)(key, value, what)
        p.record_inputs_after()
        if self.also:
            self.also(p)
        if self.grad_of:
            keys = [key for key, _ in self.outputs]
            p.step = f"backpropagating from {dict(self.outputs)[self.grad_of]} to the inputs"
            p.backward(values[keys.index(self.grad_of)])
            p.record_input_grads()

    def _split(self, result, fn_name):
        if not self.outputs:  # called for what it does; also(p) records that
            return []
        if len(self.outputs) == 1:
            return [result]
        if not isinstance(result, (tuple, list)) or len(result) != len(self.outputs):
            wanted = ", ".join(what.split(" (")[0] for _, what in self.outputs)
            raise ProbeFailure(f"{fn_name} should return {len(self.outputs)} values ({wanted}), "
                               f"got {type(result).__name__}"
                               + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
        return list(result)


def as_number(value):
    """A 0-d tensor as its Python number (a mean loss, a rate may be either); anything else as it is."""
    return value.item() if isinstance(value, torch.Tensor) and value.dim() == 0 else value


class Repeated(Kind):
    """A function called once per row of args["calls"] (each row its positional arguments);
    the results are recorded as one list, `results` (a 0-d tensor counts as its number).
    A schedule, say: the learning rate of every step."""

    def __init__(self, name=None, what="the returned values"):
        self.name = name
        self.what = what

    def probe(self, p):
        fn = p.name(self.name) if self.name else p.obj
        fn_name = getattr(fn, "__name__", self.name or "your function")
        results = []
        for row in p.case.args["calls"]:
            p.step = f"calling {fn_name}({', '.join(repr(v) for v in row)})"
            value = fn(*row)
            results.append(as_number(value))
        p.record_value("results", results, self.what)


class Methods(Kind):
    """A class: construct it, then call the methods the case lists, recording each result.

    construct(p) -> (positional, keywords). The case's args["calls"] is a list of
    {"method": name, "args": [...], "kwargs": {...}}; an argument {"$array": name} is the
    case's array as a tensor, {"$result": i} the result of call i (decode(encode(text))).
    load_state: copy the case's state/<name> arrays into it first (a module).
    """

    def __init__(self, construct, load_state=False, module=False):
        self.construct = construct
        self.load_state = load_state
        self.module = module

    def probe(self, p):
        positional, keywords = self.construct(p)
        obj = p.construct(p.obj, positional, keywords, module=self.module)
        if self.load_state:
            p.load_state(obj)
            p.prepare(obj, train=False)
        results = []
        for i, call in enumerate(p.case.args["calls"]):
            method = call["method"]
            args = [self._resolve(p, v, results) for v in call.get("args", [])]
            kwargs = {k: self._resolve(p, v, results) for k, v in call.get("kwargs", {}).items()}
            p.step = f"calling .{method}({_describe_call(p, args, kwargs)}) (call {i + 1})"
            bound = getattr(obj, method, None)
            if not callable(bound):
                raise ProbeFailure(f"{type(obj).__name__} has no method {method}()")
            with torch.no_grad():
                results.append(bound(*args, **kwargs))
            p.record_value(f"call_{i}/{method}", results[-1], f"the result of .{method}()")

    @staticmethod
    def _resolve(p, value, results):
        if isinstance(value, dict) and set(value) == {"$array"}:
            return p.tensor(value["$array"])
        if isinstance(value, dict) and set(value) == {"$result"}:
            return results[value["$result"]]
        if isinstance(value, list):
            return [Methods._resolve(p, v, results) for v in value]
        return value


class Dataset(Kind):
    """A torch Dataset: its length and the items the case's args["items"] lists.

    construct(p) -> (positional, keywords), e.g. a text, p.ctx.tokenizer and sizes.
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

    def probe(self, p):
        positional, keywords = self.construct(p)
        if p.case.args.get("may_refuse"):
            # Where the spec allows either an empty data set or an error (a text too short for
            # one window), an exception is an answer, recorded as such; the hidden side lists
            # {"refused": True} as an accepted alternative to the reference's empty data set.
            try:
                dataset = p.construct(p.obj, positional, keywords, module=False)
            except Exception:  # noqa: BLE001 - any deliberate refusal will do
                p.record_value("refused", True, "whether creating it raised an error")
                return
            p.record_value("refused", False, "whether creating it raised an error")
        else:
            dataset = p.construct(p.obj, positional, keywords, module=False)
        if not isinstance(dataset, torch.utils.data.Dataset):
            raise ProbeFailure(f"{type(dataset).__name__} should be a subclass of torch.utils.data.Dataset")
        p.step = "calling len() of your dataset"
        p.record_value("len", len(dataset), "len(dataset)")
        items = p.case.args.get(self.items_arg, [0])
        for position, i in enumerate(items):
            p.step = f"reading item {i} of your dataset"
            item = dataset[i]
            if self.item_types and position == 0:
                p.record_value("item_types", describe_types(item), f"the types in dataset[{i}]")
            p.record_value(f"item/{i}", item, f"dataset[{i}]")


def describe_types(value):
    """'tensor int64' for a tensor, the type's name otherwise; a list for a tuple or list."""
    if isinstance(value, (tuple, list)):
        return [describe_types(v) for v in value]
    if isinstance(value, torch.Tensor):
        return f"tensor {str(value.dtype).replace('torch.', '')}"
    return type(value).__name__


class Loader(Kind):
    """A function that returns a DataLoader: how many batches, and what they hold.

    call(p) -> (positional, keywords). What is recorded besides `num_batches` follows the
    case's args:
    - "batches" (default 2): the first batches, compared as they are (a loader that does
      not shuffle);
    - "sampler": the name of the loader's sampler class (RandomSampler when it shuffles);
    - "batch_shapes": the shape of every tensor of every batch (order-free, so fine for a
      shuffled loader);
    - "windows": every row of every batch, (input row, target row) pairs, sorted: the same
      multiset whatever order a shuffled loader draws them in.
    """

    def __init__(self, call):
        self.call = call
        self.hints = (sampler_hint,)

    def probe(self, p):
        positional, keywords = self.call(p)
        fn = p.obj
        p.step = f"calling {getattr(fn, '__name__', 'your function')}({_describe_call(p, positional, keywords)})"
        loader = fn(*positional, **keywords)
        if not isinstance(loader, torch.utils.data.DataLoader):
            raise ProbeFailure(f"{getattr(fn, '__name__', 'your function')} should return a "
                               f"torch.utils.data.DataLoader, got {type(loader).__name__}")
        p.step = "calling len() of the returned loader"
        p.record_value("num_batches", len(loader), "len(loader)")
        args = p.case.args
        if args.get("sampler"):
            p.record_value("sampler", type(loader.sampler).__name__, "the loader's sampler")
        wanted = args.get("batches", 2)
        read_all = args.get("batch_shapes") or args.get("windows")
        shapes, rows = [], []
        for i, batch in enumerate(loader):
            if i >= wanted and not read_all:
                break
            p.step = f"reading batch {i} of the loader"
            if i < wanted:
                p.record_value(f"batch/{i}", batch, f"batch {i}")
            if args.get("batch_shapes"):
                shapes.append(describe_shapes(batch))
            if args.get("windows"):
                rows.extend(_window_rows(batch))
        if args.get("batch_shapes"):
            p.record_value("batch_shapes", sorted(shapes), "the shapes of the batches")
        if args.get("windows"):
            p.record_value("windows", sorted(rows), "every (input, target) window of the loader, sorted")


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

    write(p, writer, path) calls the writer; read(p, reader, path) calls the reader and
    returns what to record (e.g. the state it restored). The file name is args["filename"].
    """

    def __init__(self, writer, reader, write, read):
        self.writer, self.reader = writer, reader
        self.write, self.read = write, read

    def probe(self, p):
        path = os.path.join(p.ctx.scratch, p.case.args.get("filename", "round_trip.bin"))
        p.step = f"calling {self.writer}(..., {os.path.basename(path)!r})"
        self.write(p, p.name(self.writer), path)
        if not os.path.isfile(path):
            raise ProbeFailure(f"{self.writer} did not write a file at the path it was given")
        p.record_value("file_written", True, "whether a file was written")
        p.step = f"calling {self.reader}({os.path.basename(path)!r}, ...)"
        p.record_value("read_back", self.read(p, p.name(self.reader), path), f"what {self.reader} returned")


# ------------------------------------------------------------------------------------------
# Training and sampling
# ------------------------------------------------------------------------------------------

class TrainingLoop(Kind):
    """A training function run on a small model the kind builds from the case.

    build(p) -> dict of objects with at least "model" and "optimizer" (and loaders...);
    call(p, fn, objects) calls the student's function and returns its result. Recorded:
    the returned value, how often optimizer.step() and .zero_grad() were called, whether
    the model is left in train mode, and every parameter afterwards. Torch's random numbers
    are seeded from the case first, so the reference and a student who draws the same
    numbers in the same order agree exactly.

    spy: a hook on the model notes the mode (train/eval) and the gradient mode of every
    forward call: `forward_calls` counts each combination (owned: training calls must be as
    many as the reference's, evaluation calls in eval mode without gradients, how many is
    free). name: the graded name to call (default: the task's first). optimizer_view: at
    every optimizer.step() the learning rate of the first parameter group and the norm of all
    gradients (what clipping changes) are noted: `lr_per_step`, `grad_norm_per_step`; with
    several parameter groups also every group's rate, `lr_per_group_per_step` (a schedule sets
    them all).
    """

    TRAINING, EVALUATION = "train mode, gradients on", "eval mode, gradients off"
    EVAL_WITH_GRAD, TRAIN_WITHOUT_GRAD = "eval mode, gradients on", "train mode, gradients off"

    def __init__(self, build, call, spy=False, optimizer_view=False, name=None):
        self.build = build
        self.call = call
        self.name = name  # the graded name to call (default: the task's first)
        self.spy = spy
        self.optimizer_view = optimizer_view

    def probe(self, p):
        p.step = "building the small model the test trains"
        objects = self.build(p)
        model, optimizer = objects["model"], objects["optimizer"]
        steps = _watch_steps(optimizer, model) if self.optimizer_view else None
        counts = _count_calls(optimizer, ("step", "zero_grad"))
        calls = _spy_forward_calls(model) if self.spy else None
        torch.manual_seed(p.ctx.seed % 2**31)
        fn = p.name(self.name) if self.name else p.obj
        p.step = f"calling {getattr(fn, '__name__', 'your training function')}(...)"
        with contextlib.redirect_stdout(io.StringIO()):  # the loop's progress lines are not feedback
            result = self.call(p, fn, objects)
        # The judge reads the observations in this order: what went wrong in the loop (calls,
        # modes, rates, clipping) before what follows from it (the returned losses, the weights).
        p.record_value("optimizer_calls", dict(counts), "the optimizer calls")
        if calls is not None:
            p.record_value("forward_calls", self._count_modes(calls), "the model's forward calls by mode")
        p.record_value("training_mode_after", bool(model.training), "the model's mode afterwards")
        if steps is not None:
            p.record_value("lr_per_step", steps["lr"], "the learning rate at each optimizer step")
            if len(optimizer.param_groups) > 1:
                p.record_value("lr_per_group_per_step", steps["lr_per_group"],
                               "the learning rate of every parameter group at each optimizer step")
            p.record_value("grad_norm_per_step", steps["grad_norm"], "the gradient norm at each optimizer step")
        p.record_value("returned", result, "the returned value")
        for name, param in sorted(model.named_parameters()):
            p.record(f"param/{name}", param, f"parameter {name}")

    def _count_modes(self, calls):
        names = {(True, True): self.TRAINING, (False, False): self.EVALUATION,
                 (False, True): self.EVAL_WITH_GRAD, (True, False): self.TRAIN_WITHOUT_GRAD}
        counts = dict.fromkeys(names.values(), 0)
        for mode in calls:
            counts[names[mode]] += 1
        return counts

    def owns(self, key):
        return key in ("forward_calls", "optimizer_calls")

    def judge_key(self, key, got, expected, case):
        have, want = got.get(key), expected[key]
        if not isinstance(have, dict):
            return f"{key.replace('_', ' ')} could not be observed"
        if key == "optimizer_calls":
            return self._optimizer_calls_problem(have, want)
        return self._forward_calls_problem(have, want)

    @staticmethod
    def _optimizer_calls_problem(have, want):
        """step() exactly as often as the reference; zero_grad() at least as often (an extra
        call, before the first batch say, changes nothing)."""
        steps, zeroed = have.get("step", 0), have.get("zero_grad", 0)
        if steps != want["step"]:
            return (f"optimizer.step() was called {steps} times, expected {want['step']}: one step per batch, "
                    f"after loss.backward()")
        if zeroed < want["zero_grad"]:
            return (f"optimizer.zero_grad() was called {zeroed} times, expected {want['zero_grad']}: without it "
                    f"each batch's gradients add up to the previous ones; call it once per batch, before "
                    f"loss.backward()")
        return None

    def _forward_calls_problem(self, have, want):
        trained, wanted = have.get(self.TRAINING, 0), want[self.TRAINING]
        if have.get(self.EVAL_WITH_GRAD, 0) and trained < wanted:
            return (f"{have[self.EVAL_WITH_GRAD]} training steps ran with the model in eval mode: after "
                    f"evaluating, switch back with model.train() before the next batch (dropout must be "
                    f"on while training)")
        if have.get(self.EVAL_WITH_GRAD, 0):
            return (f"{have[self.EVAL_WITH_GRAD]} evaluation calls of the model ran with gradients on: "
                    f"evaluate inside `with torch.no_grad():`, which builds no graph and saves memory")
        if have.get(self.TRAIN_WITHOUT_GRAD, 0):
            return (f"{have[self.TRAIN_WITHOUT_GRAD]} evaluation calls of the model ran in train mode: call "
                    f"model.eval() before evaluating (it turns dropout off), and model.train() afterwards")
        if trained != wanted:
            return (f"the model ran {trained} times with gradients in train mode, expected {wanted}: one "
                    f"forward pass per batch, for every batch of every epoch")
        if want.get(self.EVALUATION, 0) and not have.get(self.EVALUATION, 0):
            return "the model was never evaluated (in eval mode, without gradients)"
        return None


def _spy_forward_calls(model):
    """A list that gets (model.training, torch.is_grad_enabled()) at every forward call."""
    calls = []
    model.register_forward_pre_hook(lambda module, inputs: calls.append((module.training, torch.is_grad_enabled())))
    return calls


def _watch_steps(optimizer, model):
    """Wrap optimizer.step so that every call notes the first group's learning rate, every
    group's, and the norm of all the model's gradients at that moment (after any clipping)."""
    seen = {"lr": [], "lr_per_group": [], "grad_norm": []}
    original = optimizer.step

    def step(*args, **kwargs):
        seen["lr"].append(float(optimizer.param_groups[0]["lr"]))
        seen["lr_per_group"].append([float(group["lr"]) for group in optimizer.param_groups])
        grads = [param.grad.detach().double().pow(2).sum() for param in model.parameters() if param.grad is not None]
        seen["grad_norm"].append(float(torch.stack(grads).sum().sqrt()) if grads else 0.0)
        return original(*args, **kwargs)

    optimizer.step = step
    return seen


def _count_calls(obj, methods):
    """Wrap obj's methods (on the instance) so that their calls are counted."""
    counts = {name: 0 for name in methods}
    for name in methods:
        original = getattr(obj, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        setattr(obj, name, counted)
    return counts


class Sampler(Kind):
    """A random sampler, drawn many times; judged on how often each outcome came up.

    call(p, fn) -> a 1-D sequence of integer outcomes (the chapter decides how: one call
    with a large batch, or a loop). args["num_outcomes"] outcomes are counted. The judge
    needs expected["internals/probs"], each outcome's probability (the hidden side adds
    it): an outcome of probability 0 must never come up, one of probability 1 every time,
    and every other count must lie inside its exact binomial acceptance interval. Each
    interval leaves out at most false_failure / (number of such outcomes) of the binomial's
    probability, so a correct sampler fails a case with probability at most false_failure
    (1e-7 by default), whatever order it draws its random numbers in. Where the counts are
    off, expected["internals/mistakes"] ([(message, probabilities)], optional) names the
    known wrong distribution they fit. describe(k, case) -> how feedback names outcome k.
    Torch's random numbers are seeded from the case, so a run is reproducible.
    """

    def __init__(self, call, false_failure=1e-7, describe=None):
        self.call = call
        self.false_failure = false_failure
        self.describe = describe or (lambda k, case: f"outcome {k}")

    def probe(self, p):
        torch.manual_seed(p.ctx.seed % 2**31)
        fn = p.obj
        step = f"drawing samples with {getattr(fn, '__name__', 'your function')}"

        def drawing(*args, **kwargs):  # the step is named when the code under test runs, whatever call did before
            p.step = step
            return fn(*args, **kwargs)

        p.step = step
        draws = np.asarray(to_int_list(self.call(p, drawing)), dtype=np.int64)
        size = p.case.args["num_outcomes"]
        if draws.size and (draws.min() < 0 or draws.max() >= size):
            raise ProbeFailure(f"a sample is outside 0..{size - 1}: {int(draws.min())}..{int(draws.max())}")
        p.record_value("num_draws", int(draws.size), "the number of samples")
        p.record_value("counts", np.bincount(draws, minlength=size), "how often each outcome came up")

    def owns(self, key):
        return key == "counts"

    def judge_key(self, key, got, expected, case):
        counts = got.get("counts")
        probs = np.asarray(expected.get("internals/probs"), dtype=np.float64)
        if not isinstance(counts, np.ndarray) or counts.shape != probs.shape:
            return "the samples could not be counted"
        impossible = np.flatnonzero((probs == 0) & (counts > 0))
        off = None if impossible.size else self.outside(counts, probs)
        if not impossible.size and off is None:
            return None
        fits = []  # the known wrong distributions the counts are consistent with, best fit first
        for message, wrong in expected.get("internals/mistakes", ()):
            wrong = np.asarray(wrong, dtype=np.float64)
            if not ((wrong == 0) & (counts > 0)).any() and self.outside(counts, wrong) is None:
                fits.append((_misfit(counts, wrong), message))
        if fits:
            return f"the samples follow another distribution — it looks like {min(fits)[1]}"
        if impossible.size:
            k = int(impossible[0])
            return (f"{self.describe(k, case)} came up {int(counts[k])} times although its probability is 0 "
                    f"(it should have been filtered out)")
        k, low, high = off
        n = int(counts.sum())
        return (f"{self.describe(k, case)} came up {int(counts[k])} times in {n} draws, expected between {low} "
                f"and {high} (probability {probs[k]:.4f}): the samples do not follow the right distribution")

    def outside(self, counts, probs):
        """(outcome, low, high) of the first count outside its acceptance interval, or None."""
        n = int(counts.sum())
        uncertain = (probs > 0) & (probs < 1)
        alpha = self.false_failure / max(1, int(uncertain.sum()))
        for k in range(len(probs)):
            low, high = binomial_acceptance(n, float(probs[k]), alpha)
            if not low <= counts[k] <= high:
                return k, low, high
        return None


def _misfit(counts, probs):
    """How far counts are from n * probs, in squared standard deviations (a chi-square)."""
    n = counts.sum()
    spread = n * probs * (1 - probs)
    inside = spread > 0
    return float((((counts - n * probs)[inside]) ** 2 / spread[inside]).sum())


def binomial_acceptance(n, prob, alpha):
    """[low, high]: the counts of a Binomial(n, prob) whose lower and upper tails are each above
    alpha / 2; a count outside comes up with probability at most alpha. Exact: the pmf is
    computed in logs from lgamma, no normal approximation."""
    if prob <= 0:
        return 0, 0
    if prob >= 1:
        return n, n
    k = np.arange(n + 1)
    log_factorial = _log_factorials(n)
    log_pmf = (log_factorial[n] - log_factorial[k] - log_factorial[n - k]
               + k * np.log(prob) + (n - k) * np.log1p(-prob))
    pmf = np.exp(log_pmf)
    at_most = np.cumsum(pmf)  # P(X <= k)
    at_least = np.cumsum(pmf[::-1])[::-1]  # P(X >= k)
    inside = np.flatnonzero((at_most > alpha / 2) & (at_least > alpha / 2))
    return int(inside[0]), int(inside[-1])


@functools.lru_cache(maxsize=8)
def _log_factorials(n):
    return np.array([math.lgamma(i + 1) for i in range(n + 1)])


def to_int_list(value):
    if isinstance(value, torch.Tensor):
        return torch.Tensor.detach(value).cpu().reshape(-1).tolist()
    return [int(v) for v in np.asarray(value).reshape(-1)]
