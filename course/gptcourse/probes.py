"""How each task's code is exercised: a probe runs a student's function or class on one case
and writes down what it sees (outputs, gradients, attribute layout) as plain observations.

The same probes serve three purposes:
- the self-check in a student's notebook runs them on the student's code and compares the
  observations with the fixtures that ship with the course;
- the grader runs them on the student's code in a separate worker process;
- the grader runs them on its hidden reference to know what to expect.
A probe never decides whether something is right: that is the judge's job (judge.py).
"""
import os
import traceback

import numpy as np
import torch
import torch.nn as nn

from .records import Case

# Frames from these folders are library code; the student's line is the innermost other one.
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) for module in (torch, np)
) + (os.path.dirname(os.path.abspath(__file__)),)

NUM_DROPOUT_PASSES = 3


class ProbeFailure(Exception):
    """A problem the probe detected itself, with a message meant for the student."""


class _Probe:
    """The state of one probe run: the case, the observations so far, the current step."""

    def __init__(self, case):
        self.case = case
        self.obs = {}
        self.step = "starting"
        self.dtype = getattr(torch, case.dtype)
        self.device = torch.device(case.device)

    # -- inputs ---------------------------------------------------------------------------
    def tensor(self, name, requires_grad=False):
        value = torch.tensor(self.case.arrays[name], dtype=self.dtype, device=self.device)
        return value.requires_grad_(requires_grad)

    # -- observations ---------------------------------------------------------------------
    def record(self, key, value, what):
        self.obs[key] = to_array(value, what)

    def record_grad(self, key, tensor):
        grad = tensor.grad
        self.obs[key] = None if grad is None else to_array(grad, key)

    def backward(self, output, seed_name="grad_seed"):
        """Backpropagate sum(output * seed): the gradient then depends on every output value."""
        seed = self.tensor(seed_name)
        if tuple(output.shape) != tuple(seed.shape):
            raise ProbeFailure(
                f"cannot check gradients: the output has shape {tuple(output.shape)}, "
                f"expected {tuple(seed.shape)}"
            )
        if not output.requires_grad:
            raise ProbeFailure(
                "the output is not connected to the autograd graph (no gradient can flow back): "
                "avoid .detach(), .data, .item(), numpy or torch.no_grad() inside your code"
            )
        (output * seed).sum().backward()

    # -- modules --------------------------------------------------------------------------
    def construct(self, cls, positional, keywords=None):
        keywords = keywords or {}
        shown = ", ".join([repr(v) for v in positional] + [f"{k}={v!r}" for k, v in keywords.items()])
        self.step = f"creating {getattr(cls, '__name__', 'the object')}({shown})"
        module = cls(*positional, **keywords)
        if not isinstance(module, nn.Module):
            raise ProbeFailure(f"{cls.__name__} should be a subclass of nn.Module")
        return module

    def load_state(self, module):
        """Copy the case's weights into the module's parameters, by parameter name."""
        self.step = "loading the test weights into your module"
        params = dict(module.named_parameters())
        expected = {key[len("state/"):] for key in self.case.arrays if key.startswith("state/")}
        self.obs["extra_parameters"] = sorted(set(params) - expected)
        with torch.no_grad():
            for name in sorted(expected):
                value = torch.tensor(self.case.arrays["state/" + name])
                if name not in params:
                    raise ProbeFailure(f"your module has no parameter named {name!r}")
                if tuple(params[name].shape) != tuple(value.shape):
                    raise ProbeFailure(
                        f"parameter {name!r} has shape {tuple(params[name].shape)}, "
                        f"expected {tuple(value.shape)}"
                    )
                params[name].copy_(value)

    def prepare(self, module, train=False):
        """Move the module to the case's device and dtype, the way a training script would."""
        self.step = f"moving your module with .to({self.case.device!r})"
        module.to(device=self.device, dtype=self.dtype)
        module.train(train)
        return module

    def record_parameter_grads(self, module):
        for name, param in sorted(module.named_parameters()):
            if "state/" + name in self.case.arrays:
                self.record_grad("grad/" + name, param)


def to_array(value, what):
    """A float64 numpy copy of a tensor, refusing anything that is not a real tensor."""
    if not isinstance(value, torch.Tensor):
        raise ProbeFailure(f"{what} should be a torch.Tensor, got {type(value).__name__}")
    return torch.Tensor.detach(value).to("cpu", torch.float64).numpy().copy()


def describe_attribute(module, name):
    """A short, comparable description of one attribute that the spec pins down."""
    if name in dict(module.named_buffers(recurse=False)):
        buffer = getattr(module, name)
        return f"registered buffer of shape {tuple(buffer.shape)}"
    if not hasattr(module, name):
        return "missing"
    value = getattr(module, name)
    if isinstance(value, nn.Parameter):
        return f"nn.Parameter of shape {tuple(value.shape)}"
    if isinstance(value, nn.Linear):
        return (f"nn.Linear(in_features={value.in_features}, out_features={value.out_features}, "
                f"bias={value.bias is not None})")
    if isinstance(value, nn.ModuleList):
        kinds = sorted({type(m).__name__ for m in value})
        distinct = len({id(m) for m in value})
        return f"nn.ModuleList of {len(value)} {'/'.join(kinds) or 'modules'} ({distinct} distinct objects)"
    if isinstance(value, torch.Tensor):
        return f"a plain tensor attribute of shape {tuple(value.shape)} (not a registered buffer)"
    return f"a {type(value).__name__}"


def describe_mask(module, context_length, task_id):
    """The `mask` attribute: a registered buffer holding the causal pattern of context_length.

    Leading singleton dimensions, float or bool are all fine. Task 3.2 only asks for "a causal
    mask buffer", so there a mask of the allowed positions (tril) is accepted too.
    """
    if "mask" not in dict(module.named_buffers(recurse=False)):
        return describe_attribute(module, "mask")
    mask = module.mask.detach().cpu()
    while mask.dim() > 2 and mask.shape[0] == 1:
        mask = mask[0]
    if tuple(mask.shape) != (context_length, context_length):
        return (f"registered buffer of shape {tuple(module.mask.shape)} (expected "
                f"({context_length}, {context_length}) for context_length={context_length})")
    future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
    if torch.equal(mask.bool(), future) or (task_id == "3.2" and torch.equal(mask.bool(), ~future)):
        return "registered buffer with the causal pattern (ones above the diagonal)"
    return "registered buffer without the causal pattern (ones above the diagonal, diagonal=1)"


# ------------------------------------------------------------------------------------------
# One probe routine per kind of task.
# ------------------------------------------------------------------------------------------

def _probe_simple_self_attention(fn, p):
    x = p.tensor("x", requires_grad=True)
    p.step = "calling simple_self_attention(inputs)"
    result = fn(x)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ProbeFailure(
            f"simple_self_attention should return a pair (attn_weights, context_vecs), "
            f"got {type(result).__name__}"
        )
    weights, context = result
    p.record("weights", weights, "attn_weights (first returned value)")
    p.record("context", context, "context_vecs (second returned value)")
    p.record("x_after", x, "inputs")
    p.step = "backpropagating from context_vecs to inputs"
    p.backward(context)
    p.record_grad("grad/x", x)


def _probe_causal_attention_weights(fn, p):
    scores = p.tensor("scores", requires_grad=True)
    d_k = p.case.args["d_k"]
    p.step = f"calling causal_attention_weights(attn_scores, d_k={d_k})"
    weights = fn(scores, d_k)
    p.record("weights", weights, "the returned attention weights")
    p.record("x_after", scores, "attn_scores")
    p.step = "backpropagating from the weights to attn_scores"
    p.backward(weights)
    p.record_grad("grad/x", scores)


# Attributes each module task pins down (COURSE_SPEC.md).
PINNED_ATTRIBUTES = {
    "2.2": ("W_query", "W_key", "W_value"),
    "2.3": ("W_query", "W_key", "W_value"),
    "2.5": ("W_query", "W_key", "W_value", "mask"),
    "3.1": ("heads",),
    "3.2": ("W_query", "W_key", "W_value", "out_proj", "mask"),
}


def constructor_arguments(case):
    """Positional arguments in the spec's order; qkv_bias by keyword, only when set."""
    a = case.args
    if case.task in ("2.2", "2.3"):
        positional = [a["d_in"], a["d_out"]]
    elif case.task == "2.5":
        positional = [a["d_in"], a["d_out"], a["context_length"], a["dropout"]]
    else:
        positional = [a["d_in"], a["d_out"], a["context_length"], a["dropout"], a["num_heads"]]
    keywords = {"qkv_bias": True} if a.get("qkv_bias") else {}
    return positional, keywords


def _record_structure(module, p):
    p.step = "inspecting your module's attributes"
    structure = {name: describe_attribute(module, name) for name in PINNED_ATTRIBUTES[p.case.task]}
    if "mask" in structure:
        structure["mask"] = describe_mask(module, p.case.args["context_length"], p.case.task)
    p.obs["structure"] = structure


def _probe_module_forward(cls, p):
    positional, keywords = constructor_arguments(p.case)
    module = p.construct(cls, positional, keywords)
    _record_structure(module, p)
    p.load_state(module)
    p.prepare(module, train=False)

    x = p.tensor("x", requires_grad=True)
    p.step = "running forward in eval mode"
    out = module(x)
    p.record("out", out, "the output of forward")
    p.record("x_after", x, "the input x")
    p.step = "backpropagating from the output"
    p.backward(out)
    p.record_grad("grad/x", x)
    p.record_parameter_grads(module)

    if "x_future" in p.case.arrays:
        # Same tokens up to position t, different ones after it: a causal module's output
        # up to t must not change.
        t = p.case.args["causal_t"]
        p.step = "running forward on an input whose tokens after position t were changed"
        with torch.no_grad():
            out_future = module(p.tensor("x_future"))
        p.record("out_future_prefix", out_future[:, : t + 1], "the output of forward")

    if p.case.args.get("dropout") == 0.0 and "dropout" in p.case.args:
        p.step = "running forward in train mode with dropout=0.0"
        module.train()
        with torch.no_grad():
            p.record("out_train", module(p.tensor("x")), "the output of forward")


def _probe_module_dropout(cls, p):
    positional, keywords = constructor_arguments(p.case)
    module = p.construct(cls, positional, keywords)
    p.load_state(module)
    p.prepare(module, train=True)
    x = p.tensor("x")
    with torch.no_grad():
        for i in range(NUM_DROPOUT_PASSES):
            p.step = f"running forward in train mode with dropout={p.case.args['dropout']} (pass {i + 1})"
            p.record(f"train_{i}", module(x), "the output of forward")
        p.step = "running forward in eval mode after training mode"
        module.eval()
        p.record("out_eval", module(x), "the output of forward")


def _probe_module_raises(cls, p):
    positional, keywords = constructor_arguments(p.case)
    try:
        p.construct(cls, positional, keywords)
    except Exception:  # any exception is the requested behaviour here
        p.obs["raises"] = True
    else:
        p.obs["raises"] = False


_ROUTINES = {
    ("2.1", "forward"): _probe_simple_self_attention,
    ("2.4", "forward"): _probe_causal_attention_weights,
}
for _task in PINNED_ATTRIBUTES:
    _ROUTINES[(_task, "forward")] = _probe_module_forward
    _ROUTINES[(_task, "dropout")] = _probe_module_dropout
    _ROUTINES[(_task, "raises")] = _probe_module_raises


def run_probe(obj, case: Case):
    """Exercise `obj` (a student's function or class) on `case`; return the observations.

    Exceptions raised by the code under test are caught and recorded under "error", with
    the step that was running and the student's line, so one broken case never hides others.
    """
    probe = _Probe(case)
    try:
        _ROUTINES[(case.task, case.kind)](obj, probe)
    except (Exception, SystemExit) as exc:  # student code may raise anything, even SystemExit
        probe.obs["error"] = describe_exception(exc, probe.step)
    return probe.obs


def describe_exception(exc, step):
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:600],
        "step": step,
        "where": _student_line(exc),
        "ours": isinstance(exc, ProbeFailure),
    }


def _student_line(exc):
    """'line 12: attn = ...' for the innermost frame outside torch, numpy and gptcourse."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.abspath(frame.filename) if not frame.filename.startswith("<") else frame.filename
        if path.startswith(_LIBRARY_DIRS) or "site-packages" in path:
            continue
        where = f"line {frame.lineno}: {frame.line.strip()}" if frame.line else f"line {frame.lineno}"
    return where
