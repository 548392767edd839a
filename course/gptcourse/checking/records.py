"""Plain-data records shared by the self-checks and the grader.

A `Case` is one way of exercising a task (its inputs, the weights to load, the constructor
arguments). Probes turn a case and a student's objects into *observations*: a flat dict of
plain values. Everything here is plain data so that it can be written to the JSON fixtures
that ship with the course and sent between grader processes without ever unpickling an
object that student code made.

What a record may hold (`dumps` / `loads` round-trip all of it):
- None, bool, int, float (NaN and the infinities included), str;
- lists, tuples (read back as lists) and dicts (keys become strings);
- numpy arrays of numbers or booleans. Small ones (at most `INLINE_LIMIT` elements) are
  written as a list of numbers so that fixture diffs stay readable; larger ones as the
  base64 text of their raw little-endian bytes, which is exact and about four times smaller
  than a list of float64 numbers in JSON.
"""
import base64
import json
import re
from dataclasses import dataclass, field

import numpy as np

INLINE_LIMIT = 64  # arrays with more elements are stored as base64 bytes


@dataclass
class Case:
    task: str  # the task id, as in the task table
    kind: str  # which probe routine of the task runs: "forward", "dropout", "raises", ...
    label: str  # shown in feedback: "batch of 2, 6 tokens, d_in=3, d_out=2"
    args: dict  # constructor / call arguments (JSON-able: numbers, text, nested lists, dicts)
    arrays: dict = field(default_factory=dict)  # name -> np.ndarray (inputs, weights, grad seeds)
    dtype: str = "float32"  # the dtype floating-point inputs and modules are used in
    device: str = "cpu"  # "cpu", "cuda", or "meta" for the pass that catches device mix-ups

    def on(self, device):
        """The same case, run on another device."""
        return Case(self.task, self.kind, self.label, self.args, self.arrays, self.dtype, device)

    def to_data(self):
        return {
            "task": self.task, "kind": self.kind, "label": self.label, "args": self.args,
            "arrays": self.arrays, "dtype": self.dtype, "device": self.device,
        }

    @classmethod
    def from_data(cls, data):
        return cls(**data)


_ARRAY_TAG = "__ndarray__"


def _encode_array(value):
    if value.dtype.kind not in "biuf":
        raise TypeError(f"cannot record an array of dtype {value.dtype}")
    encoded = {"dtype": str(value.dtype), "shape": list(value.shape)}
    if value.size <= INLINE_LIMIT:
        encoded["data"] = [float(v) if value.dtype.kind == "f" else v.item() for v in value.ravel()]
    else:
        little = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
        encoded["base64"] = base64.b64encode(little.tobytes()).decode("ascii")
    return {_ARRAY_TAG: encoded}


def _decode_array(encoded):
    dtype = np.dtype(encoded["dtype"])
    if "base64" in encoded:
        raw = base64.b64decode(encoded["base64"])
        flat = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)
    else:
        flat = np.array(encoded["data"], dtype=dtype)
    return flat.reshape(encoded["shape"])


def _encode(value):
    if isinstance(value, np.ndarray):
        return _encode_array(value)
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot record a value of type {type(value).__name__}")


def _decode(value):
    if isinstance(value, dict):
        if set(value) == {_ARRAY_TAG}:
            return _decode_array(value[_ARRAY_TAG])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


_FLAT_LIST = re.compile(r"\[\s+([^\[\]{}\"]*?)\s+\]")


def dumps(value, indent=None):
    """JSON text of plain data with numpy arrays (NaN and infinities allowed).

    Key order is kept (it is the order in which a probe observed things, which the judge
    follows); with an indent, lists of numbers stay on one line to keep fixture diffs short.
    """
    text = json.dumps(_encode(value), indent=indent)
    if indent is None:
        return text
    return _FLAT_LIST.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", text)


def loads(text):
    return _decode(json.loads(text))
