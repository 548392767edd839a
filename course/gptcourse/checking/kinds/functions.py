"""Kinds that call functions and methods on values built from a case.

| kind     | exercises                                   | observations                        |
|----------|---------------------------------------------|-------------------------------------|
| Function | a pure function on values built from a case | the returned values, after/<input>, |
|          | (tensors, token ids, text, lists, dicts)    | grad/<input>                        |
| Repeated | a function called once per row of arguments | results                             |
|          | (a learning-rate schedule)                  |                                     |
| Methods  | a class: construct, then a list of calls    | call_<i>/<method>                   |
"""
import torch

from ..probes import ProbeFailure
from .base import Kind, _describe_call


class Function(Kind):
    """A function called once on values built from the case; every returned value recorded.

    call(probe) -> (positional, keywords): use probe.input(name, requires_grad) for the case's arrays
    (watched for in-place changes, gradients taken from them), probe.case.args for plain values
    (numbers, text, nested lists), probe.ctx for the tokenizer, earlier names or files.
    outputs: a key per returned value, or (key, description) pairs; with more than one the
    function must return a tuple of that length. tensors: the outputs must be tensors (the
    feedback says so when they are not); otherwise any plain value is recorded. grad_of: the
    output to backpropagate from (with the case's grad_seed); gradients of the inputs that
    require grad are recorded. name: the graded name to call (default: the task's first).
    device_pass: run once more on the meta device (default: when the outputs are tensors).
    also(probe): record more observations after the call (what a model passed in saw, say; the
    returned value is probe.result).
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
        self.returned = tuple(key for key, _ in self.outputs) if len(self.outputs) == 1 else ()

    def probe(self, probe):
        fn = probe.name(self.name) if self.name else probe.obj
        fn_name = getattr(fn, "__name__", self.name or "your function")
        positional, keywords = self.call(probe)
        probe.step = f"calling {fn_name}({_describe_call(probe, positional, keywords)})"
        result = fn(*positional, **keywords)
        probe.result = result  # for also(probe)
        values = self._split(result, fn_name)
        for (key, what), value in zip(self.outputs, values):
            if self.scalars:
                value = as_number(value)
            (probe.record if self.tensors else probe.record_value)(key, value, what)
        probe.record_inputs_after()
        if self.also:
            self.also(probe)
        if self.grad_of:
            keys = [key for key, _ in self.outputs]
            probe.step = f"backpropagating from {dict(self.outputs)[self.grad_of]} to the inputs"
            probe.backward(values[keys.index(self.grad_of)])
            probe.record_input_grads()

    def _split(self, result, fn_name):
        if not self.outputs:  # called for what it does; also(probe) records that
            return []
        if len(self.outputs) == 1:
            return [result]
        wanted = ", ".join(what.split(" (")[0] for _, what in self.outputs)
        if result is None:
            raise ProbeFailure(f"{fn_name} returned None: it should return {len(self.outputs)} values ({wanted}) "
                               f"— is its `return` statement missing?")
        if not isinstance(result, (tuple, list)) or len(result) != len(self.outputs):
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

    def probe(self, probe):
        fn = probe.name(self.name) if self.name else probe.obj
        fn_name = getattr(fn, "__name__", self.name or "your function")
        results = []
        for row in probe.case.args["calls"]:
            probe.step = f"calling {fn_name}({', '.join(repr(v) for v in row)})"
            value = fn(*row)
            results.append(as_number(value))
        probe.record_value("results", results, self.what)


class Methods(Kind):
    """A class: construct it, then call the methods the case lists, recording each result.

    construct(probe) -> (positional, keywords). The case's args["calls"] is a list of
    {"method": name, "args": [...], "kwargs": {...}}; an argument {"$array": name} is the
    case's array as a tensor, {"$result": i} the result of call i (decode(encode(text))).
    load_state: copy the case's state/<name> arrays into it first (a module).
    """

    def __init__(self, construct, load_state=False, module=False, unchanged=()):
        self.construct = construct
        self.load_state = load_state
        self.module = module
        # Names of the constructor's positional arguments that must come out of all the calls as
        # they went in (after/<name>): a tokenizer may not add to the vocabulary it was given.
        self.unchanged = unchanged

    def probe(self, probe):
        positional, keywords = self.construct(probe)
        obj = probe.construct(probe.obj, positional, keywords, module=self.module)
        if self.load_state:
            probe.load_state(obj)
            probe.prepare(obj, train=False)
        results = []
        for i, call in enumerate(probe.case.args["calls"]):
            method = call["method"]
            args = [self._resolve(probe, v, results) for v in call.get("args", [])]
            kwargs = {k: self._resolve(probe, v, results) for k, v in call.get("kwargs", {}).items()}
            probe.step = f"calling .{method}({_describe_call(probe, args, kwargs)}) (call {i + 1})"
            bound = getattr(obj, method, None)
            if not callable(bound):
                raise ProbeFailure(f"{type(obj).__name__} has no method {method}()")
            with torch.no_grad():
                results.append(bound(*args, **kwargs))
            probe.record_value(f"call_{i}/{method}", results[-1], f"the result of .{method}()")
        for name, given in zip(self.unchanged, positional):
            probe.record_value(f"after/{name}", given, f"the {name} it was given")

    @staticmethod
    def _resolve(probe, value, results):
        if isinstance(value, dict) and set(value) == {"$array"}:
            return probe.tensor(value["$array"])
        if isinstance(value, dict) and set(value) == {"$result"}:
            return results[value["$result"]]
        if isinstance(value, list):
            return [Methods._resolve(probe, v, results) for v in value]
        return value
