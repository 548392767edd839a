"""Kinds that exercise an nn.Module (or another class's constructor), and their hints.

| kind              | exercises                                   | observations                       |
|-------------------|---------------------------------------------|------------------------------------|
| ModuleForward     | an nn.Module: build, load weights by name,  | structure, out, out_again, after/x,|
|                   | forward in eval mode, gradients, causality  | grad/x, grad/<param>, ...          |
| ModuleDropout     | the same module in train mode, several runs | train_<i> (judged by the chapter), |
|                   |                                             | out_eval, out_eval_again           |
| ModuleSize        | an nn.Module at full size, built on meta    | num_parameters, children_parameters|
| ModuleSteps       | a module with state, driven by a script of  | one key per call ("step 2: tokens  |
|                   | calls (a cache)                             | 1 to 3, ..."), refusals            |
| RaisesOnConstruct | a constructor that must refuse arguments    | raises                             |
| RaisesOnCall      | a function that must refuse its arguments   | raised, message_ok                 |

The hints here explain symptoms of module code: dropout still on in eval mode, a causal
mask that is not applied, a limit that is not checked.
"""
import re
import traceback

import numpy as np
import torch

from ..probes import ProbeFailure
from .base import Kind, _describe_call


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


class ModuleForward(Kind):
    """An nn.Module in eval mode: outputs, gradients, attribute layout, causality.

    construct(args) -> (positional, keywords) for the constructor, from the case's args.
    attributes: the attribute names the contract pins down; describe: name -> fn(module, case)
    for attributes that need more than probes.describe_attribute (a mask's pattern).
    same_in_train_mode(args) -> bool: also record a train-mode output that must equal the
    eval one (dropout=0.0). The case may hold x_future (same tokens up to causal_t, others
    after it): a causal module's output up to causal_t must not change.
    initial_values: parameters whose values right after construction the contract pins down
    (LayerNorm's scale of ones): recorded as init/<name> before the test's weights replace them.
    after_construct(module): called on the module as soon as it is built, before anything is
    recorded (chapter 08 makes a wrapped layer trainable again, whatever its constructor did).
    """

    device_pass = True

    def __init__(self, construct, attributes=(), describe=None, same_in_train_mode=None,
                 extra_parameters_hint="", initial_values=(), after_construct=None):
        from ..probes import describe_attribute

        self.construct = construct
        self.after_construct = after_construct
        self.initial_values = tuple(initial_values)
        self.attributes = tuple(attributes)
        self.describe = {name: (lambda m, case, n=name: describe_attribute(m, n)) for name in self.attributes}
        self.describe.update(describe or {})
        self.same_in_train_mode = same_in_train_mode or (lambda args: False)
        self.messages = {"extra_parameters": "your module has parameters the task does not list"
                                             + (f" ({extra_parameters_hint})" if extra_parameters_hint else "")}
        self.hints = (eval_mode_hint, causal_prefix_hint)

    def probe(self, probe):
        positional, keywords = self.construct(probe.case.args)
        module = probe.construct(probe.obj, positional, keywords)
        if self.after_construct:
            self.after_construct(module)
        if self.attributes and not probe.meta:
            probe.step = "inspecting your module's attributes"
            probe.obs["structure"] = {name: self.describe[name](module, probe.case) for name in self.attributes}
        if self.initial_values and not probe.meta:
            probe.record_initial_values(module, self.initial_values)
        probe.load_state(module)
        probe.prepare(module, train=False)

        x = probe.input("x", requires_grad=np.asarray(probe.case.arrays["x"]).dtype.kind == "f")
        probe.step = "running forward in eval mode"
        out = module(x)
        probe.record("out", out, "the output of forward")
        if probe.meta:
            # The device pass needs each code path once, not the numbers: eval, then train mode.
            probe.step = "running forward in train mode"
            module.train()
            with torch.no_grad():
                module(probe.tensor("x"))
            return
        probe.record_inputs_after()
        probe.step = "running forward in eval mode a second time"
        with torch.no_grad():
            probe.record("out_again", module(probe.tensor("x")), "the output of forward")
        probe.step = "backpropagating from the output"
        probe.backward(out)
        probe.record_input_grads()
        probe.record_parameter_grads(module)

        if "x_future" in probe.case.arrays:
            t = probe.case.args["causal_t"]
            probe.step = "running forward on an input whose tokens after position t were changed"
            with torch.no_grad():
                out_future = module(probe.tensor("x_future"))
            probe.record("out_future_prefix", out_future[:, : t + 1], "the output of forward")

        if self.same_in_train_mode(probe.case.args):
            probe.step = "running forward in train mode"
            module.train()
            with torch.no_grad():
                probe.record("out_train", module(probe.tensor("x")), "the output of forward")


class ModuleDropout(Kind):
    """The module in train mode, several passes, then eval mode again.

    Which train-mode outputs are right depends on where dropout belongs, so the chapter
    gives `train_judge(got, expected, case) -> message or None`; it sees the whole
    observations (train_0, train_1, ...) and whatever the grader's side added to `expected`.
    """

    def __init__(self, construct, train_judge, passes=3):
        self.construct = construct
        self.train_judge = train_judge
        self.passes = passes
        self.hints = (eval_mode_hint,)

    def probe(self, probe):
        positional, keywords = self.construct(probe.case.args)
        module = probe.construct(probe.obj, positional, keywords)
        probe.load_state(module)
        probe.prepare(module, train=True)
        x = probe.tensor("x")
        with torch.no_grad():
            for i in range(self.passes):
                probe.step = f"running forward in train mode (pass {i + 1})"
                probe.record(f"train_{i}", module(x), "the output of forward")
            probe.step = "running forward in eval mode after training mode"
            module.eval()
            probe.record("out_eval", module(x), "the output of forward")
            probe.record("out_eval_again", module(x), "the output of forward")

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

    def probe(self, probe):
        positional, keywords = self.construct(probe.case.args)
        with torch.device("meta"):
            module = probe.construct(probe.obj, positional, keywords)
        probe.step = "counting your module's parameters"
        probe.record_value("num_parameters", sum(t.numel() for t in module.parameters()),
                       "the number of parameters")
        probe.record_value("children_parameters",
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

    def probe(self, probe):
        positional, keywords = self.construct(probe.case.args)
        module = probe.construct(probe.obj, positional, keywords)
        probe.load_state(module)
        probe.prepare(module, train=self.train_judge is not None)
        with torch.no_grad():
            for i, step in enumerate(probe.case.args["steps"]):
                if not self._run_step(probe, module, i + 1, step):
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

    def _run_step(self, probe, module, number, step):
        """Run one step; False when the script stops here."""
        if "call" in step:
            probe.step = f"calling .{step['call']}() (step {number})"
            method = getattr(module, step["call"], None)
            if not callable(method):
                raise ProbeFailure(f"{type(module).__name__} has no method {step['call']}()")
            method()
            return True
        if "none" in step:
            probe.step = f"looking at {', '.join(step['none'])} (step {number})"
            if not probe.meta:
                probe.record_value(f"step {number}: " + ", ".join(f"{name} is None" for name in step["none"]),
                               {name: getattr(module, name, "missing") is None for name in step["none"]},
                               "which attributes are None")
            return True
        start, end = step["feed"]
        kwargs = step.get("kwargs", {})
        x = probe.tensor(step.get("array", "x"))[:, start:end]
        what = self._feed_key(number, step)
        probe.step = f"calling forward on {what.split(': ', 1)[1]} (step {number})"
        if not step.get("raises"):
            output = module(x, **kwargs)
            if not probe.meta:
                probe.record(what, output, "the output")
            return True
        if probe.meta:
            return False
        try:
            module(x, **kwargs)
        except Exception as error:  # any exception counts; where it came from is recorded
            probe.record_value(what + self.REFUSAL, {"raised": True, "by_your_code": raised_by_student(error)},
                           "whether it raised")
        else:
            probe.record_value(what + self.REFUSAL, {"raised": False, "by_your_code": False}, "whether it raised")
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
    from ..probes import is_library_path

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

    def probe(self, probe):
        positional, keywords = self.construct(probe.case.args)
        try:
            probe.construct(probe.obj, positional, keywords, module=False)
        except Exception:  # any exception is the requested behaviour here
            probe.obs["raises"] = True
        else:
            probe.obs["raises"] = False


class RaisesOnCall(Kind):
    """A function that must refuse what the case gives it, with a message that says why.

    call(probe) -> (positional, keywords). Recorded: `raised` (any exception counts) and, when
    message_ok(message, case) is given, `message_ok`: whether "Type: message" says what it
    must (names the offending tensor, say). messages: feedback for `raised` and `message_ok`.
    """

    def __init__(self, call, message_ok=None, messages=None, name=None):
        self.call = call
        self.message_ok = message_ok
        self.messages = dict(messages or {})
        self.name = name

    def probe(self, probe):
        fn = probe.name(self.name) if self.name else probe.obj
        positional, keywords = self.call(probe)
        probe.step = f"calling {getattr(fn, '__name__', 'your function')}({_describe_call(probe, positional, keywords)})"
        try:
            fn(*positional, **keywords)
        except Exception as error:  # any exception is the requested behaviour here
            probe.record_value("raised", True, "whether the call raised")
            if self.message_ok:
                text = f"{type(error).__name__}: {error}"
                probe.record_value("message_ok", bool(self.message_ok(text, probe.case)), "whether the message says why")
        else:
            probe.record_value("raised", False, "whether the call raised")
