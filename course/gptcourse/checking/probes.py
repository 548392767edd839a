"""How a task's code is exercised: a probe runs a student's functions or classes on one case
and writes down what it sees (outputs, gradients, attribute layout) as plain observations.

The same probes serve three purposes:
- the self-check in a student's notebook runs them on the student's code and compares the
  observations with the fixtures that ship with the course;
- the grader runs them on the student's code in a separate worker process;
- the grader runs them on its hidden reference to know what to expect.
A probe never decides whether something is right: that is the judge's job (judge.py).

This module is generic: what a probe does for a task is a *kind* (the kinds/ package) that the task's
chapter module (chapters/chNN_name.py) picks for each of its case kinds. Nothing here names
a task.

The probe contract
------------------
`run_probe(names, case, ctx)` runs the kind registered for (case.task, case.kind) with a
`Probe` (the case, the context, the observations so far) and returns the observations. The
`ProbeContext` carries what a probe may need besides the case: the task's graded names, the
earlier graded names it uses, a scratch folder, a random generator seeded per case and the
tokenizer.

The device pass
---------------
A tensor created on the CPU inside `forward` (`torch.ones(T, T)`, `torch.arange(T)`) breaks
only once the module is on a GPU, and most graders have none. A case run on the "meta"
device (`case.on("meta")`) runs the kind once more with the module and inputs on PyTorch's
`meta` device (shapes only, no numbers, nearly free) while a dispatch mode watches every
operation: one that mixes a meta tensor with a CPU tensor of one or more dimensions is the
mistake, reported with the operation's name. Meta alone is not enough: its matmul,
embedding and indexing kernels accept CPU tensors silently. The rules follow CUDA's: 0-d CPU
tensors (Python-number-like), indexing with CPU indices and copy_ across devices are allowed,
except a write of the device's values into a CPU tensor of one or more dimensions (`copy_`,
`index_put_`: a cache preallocated on the CPU and filled with `cache[:, :, i] = k`): CUDA
accepts it, but the values then sit on the CPU and the next operation mixes them, while on
meta the copy itself fails and would hide that.
Any other error on meta (`.item()`, data-dependent code) says nothing about devices and is
ignored: the CPU run judges that code.

What the code did, noticed on the way
-------------------------------------
Some mistakes look alike in every task where they can happen, and the outputs alone do not say
which one was made. While a probe runs on the CPU, `_ArgmaxAcrossRows` watches the student's
calls of torch.argmax: the first one taken across the rows of a batch (over dim 0, or over a
whole tensor of several rows at once) is noted under NOTICED, with its line. The judge says it
only when the task fails, as what the code did (a fact about this run), whatever the task.

Several meta kernels are written in Python (torch._refs) and import torch._dynamo on first
use, about a second. `load_meta_kernels()` imports it before the first meta run (never inside
the guard); a grading worker host calls it once before it forks, so the processes it forks
for each task start with it, and processes that never run on meta (the grader's own) never
pay for it.
"""
import dis
import os
import re
import shutil
import tempfile
import traceback
import zlib

import numpy as np
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

from .records import Case
from .chapters import task_spec
from .tasks import get_task

# Frames from these folders are library code; the student's line is the innermost other one.
# The course's own folder is the whole gptcourse package (this file is in gptcourse/checking/).
_GPTCOURSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) for module in (torch, np)
) + (_GPTCOURSE_DIR,)

META = "meta"
NOTICED = "internals/noticed"  # what the code did that explains a failure, in words (judge.py says it)


class ProbeFailure(Exception):
    """A problem the probe detected itself, with a message meant for the student."""


class NothingImplemented(ProbeFailure):
    """A graded function, or a method the task's class needs, whose body does nothing yet."""


class DeviceMixError(ProbeFailure):
    """The code under test mixed a CPU tensor with the module's tensors (found on meta)."""


# ------------------------------------------------------------------------------------------
# The context a probe runs in
# ------------------------------------------------------------------------------------------

class ProbeContext:
    """What a probe may use besides its case.

    names:   the task's graded names -> the objects under test (a task may have several)
    earlier: the earlier tasks' graded names the task uses -> objects (the reference's when
             grading, so that one mistake costs points once)
    scratch: a folder the probe may write files in (made on first use unless given; a
             folder made here is removed when the probe ends)
    rng:     a numpy Generator seeded per case, for anything a probe draws
    tokenizer: the GPT-2 tokenizer, loaded on first use
    """

    def __init__(self, names=None, earlier=None, scratch=None, seed=0, tokenizer=None):
        self.names = dict(names or {})
        self.earlier = dict(earlier or {})
        self._scratch = scratch
        self._made_scratch = None
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._tokenizer = tokenizer

    def for_case(self, case, names=None):
        """A context for one case: the same names, folder and tokenizer, a freshly seeded rng."""
        seed = zlib.crc32(f"{case.task}|{case.kind}|{case.label}".encode("utf-8"))
        return ProbeContext(names if names is not None else self.names, self.earlier,
                            self._scratch, seed, self._tokenizer)

    @property
    def scratch(self):
        if self._scratch is None:
            self._made_scratch = self._scratch = tempfile.mkdtemp(prefix="gptcourse-probe-")
        return self._scratch

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from ..tokenizer import get_encoding

            self._tokenizer = get_encoding()
        return self._tokenizer

    def cleanup(self):
        if self._made_scratch:
            shutil.rmtree(self._made_scratch, ignore_errors=True)
            self._made_scratch = self._scratch = None


# ------------------------------------------------------------------------------------------
# One probe run
# ------------------------------------------------------------------------------------------

class Probe:
    """The state of one probe run: the case, its context, the observations so far, the step.

    A kind's probe(probe) and the callbacks a chapter module gives the kind get this object. Its
    attributes are fixed (__slots__): what one callback must leave for a later one (a model
    built in `build`, a DataFrame before the call) goes into `probe.kept`, a dict, by name.
    """

    __slots__ = ("case", "ctx", "obs", "step", "dtype", "device", "meta", "inputs", "cpu_inputs", "modules",
                 "kept", "result")

    def __init__(self, case, ctx):
        self.case = case
        self.ctx = ctx
        self.obs = {}  # the observations so far: key -> plain value
        self.step = "starting"  # what the probe is doing, for the message if it fails
        self.dtype = getattr(torch, case.dtype)
        self.device = torch.device(case.device)
        self.meta = case.device == META  # the device pass: shapes only, nothing is recorded
        self.inputs = {}  # name -> (leaf tensor, the tensor handed to the code under test)
        self.cpu_inputs = {}  # name -> a tensor handed over on the CPU, for the code to move (cpu_input)
        self.modules = {}  # name -> a module handed to the code under test (see module_input)
        self.kept = {}  # what a callback keeps for a later one, by name
        self.result = None  # what the function under test returned (kinds.Function, for its also(probe))

    # -- the objects under test -------------------------------------------------------------
    @property
    def obj(self):
        """The task's first graded name (most tasks have one)."""
        return self.name(get_task(self.case.task).names[0])

    def name(self, name):
        if name in self.ctx.names:
            return self.ctx.names[name]
        if name in self.ctx.earlier:
            return self.ctx.earlier[name]
        raise ProbeFailure(f"name '{name}' is not defined")

    # -- inputs ---------------------------------------------------------------------------
    def tensor(self, name, requires_grad=False):
        """The case's array `name` as a tensor: floats in the case's dtype, integers as int64."""
        array = np.asarray(self.case.arrays[name])
        if array.dtype.kind == "f":
            dtype = self.dtype
        elif array.dtype.kind == "b":
            dtype = torch.bool
        else:
            dtype = torch.int64
        value = torch.tensor(array, dtype=dtype, device=self.device)
        return value.requires_grad_(requires_grad) if dtype.is_floating_point else value

    def input(self, name, requires_grad=False):
        """An input for the code under test, watched for in-place changes.

        The code gets a copy of a leaf tensor: changing it in place then shows up as a
        changed input (with the course's own message) instead of autograd's "a leaf
        Variable that requires grad is being used in an in-place operation".
        """
        leaf = self.tensor(name, requires_grad=requires_grad)
        given = leaf.clone()
        self.inputs[name] = (leaf, given)
        return given

    def cpu_input(self, name, shown_as=None):
        """The case's integer array `name` as an int64 tensor on the CPU, whatever the case's
        device: what a data loader hands over, for the code under test to move with
        .to(device). On the device pass, an operation that meets it (or a view of it) still
        on the CPU is reported by its name (`shown_as`: the argument's name in the task)."""
        value = torch.as_tensor(np.asarray(self.case.arrays[name]), dtype=torch.int64)
        self.cpu_inputs[shown_as or name] = value
        return value

    def module_input(self, name, module):
        """A module the code under test receives as an argument (an nn.Embedding table).

        Its weights come from the case's arrays state/<name>.<parameter>, it is moved to the
        case's device and dtype in eval mode, and the gradients of its parameters are recorded
        as grad/<name>.<parameter> with the inputs' (record_input_grads).
        """
        self.step = f"preparing the {name} the test passes in"
        with torch.no_grad():
            for param_name, param in module.named_parameters():
                key = f"state/{name}.{param_name}"
                if key in self.case.arrays:
                    param.copy_(torch.tensor(self.case.arrays[key]))
        module.to(device=self.device, dtype=self.dtype).eval()
        self.modules[name] = module
        return module

    # -- observations ---------------------------------------------------------------------
    def record(self, key, value, what):
        """Record a tensor output (refusing anything else)."""
        if not self.meta:
            self.obs[key] = to_array(value, what)

    def record_value(self, key, value, what):
        """Record any plain output: tensor, array, str, number (nan too), list, dict, None."""
        if not self.meta:
            self.obs[key] = to_plain(value, what)

    def record_grad(self, key, tensor):
        if not self.meta:
            grad = tensor.grad
            self.obs[key] = None if grad is None else to_array(grad, key)

    def record_inputs_after(self):
        """after/<name>: each input as the code left it (it must be unchanged): floating-point
        inputs and integer ones (token ids) alike."""
        for name, (_, given) in self.inputs.items():
            if given.dtype != torch.bool:
                self.record_value("after/" + name, given, f"the input {name}")

    def record_initial_values(self, module, names):
        """init/<name>: a parameter's value right after construction, before any test weights."""
        self.step = "reading your module's parameters right after it was created"
        params = dict(module.named_parameters())
        for name in names:
            if name in params:
                self.record("init/" + name, params[name], f"the parameter {name}")
            else:
                self.record_value("init/" + name, None, f"the parameter {name}")

    def record_input_grads(self):
        for name, (leaf, _) in self.inputs.items():
            if leaf.requires_grad:
                self.record_grad("grad/" + name, leaf)
        for name, module in self.modules.items():
            for param_name, param in module.named_parameters():
                self.record_grad(f"grad/{name}.{param_name}", param)

    def backward(self, output, seed_name="grad_seed"):
        """Backpropagate sum(output * seed): the gradient then depends on every output value."""
        seed = self.tensor(seed_name)
        if not isinstance(output, torch.Tensor):
            raise ProbeFailure(f"cannot check gradients: the output is a {type(output).__name__}, not a tensor")
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
    def construct(self, cls, positional, keywords=None, module=True):
        keywords = keywords or {}
        shown = ", ".join([_short_repr(v) for v in positional] + [f"{k}={_short_repr(v)}" for k, v in keywords.items()])
        self.step = f"creating {getattr(cls, '__name__', 'the object')}({shown})"
        obj = cls(*positional, **keywords)
        if module and not isinstance(obj, nn.Module):
            raise ProbeFailure(f"{getattr(cls, '__name__', cls)} should be a subclass of nn.Module")
        return obj

    def load_state(self, module):
        """Copy the case's weights (arrays named state/<parameter>) into the module, by name."""
        self.step = "setting your module's parameters, by name, to the values the check uses"
        params = dict(module.named_parameters())
        expected = {key[len("state/"):] for key in self.case.arrays if key.startswith("state/")}
        if not self.meta:
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


def _short_repr(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------------------------------
# Turning outputs into plain data
# ------------------------------------------------------------------------------------------

def to_array(value, what):
    """A float64 numpy copy of a tensor, refusing anything that is not a real tensor."""
    if value is None:
        raise ProbeFailure(f"{what} should be a torch.Tensor, got None — is a `return` statement missing?")
    if not isinstance(value, torch.Tensor):
        raise ProbeFailure(f"{what} should be a torch.Tensor, got {type(value).__name__}")
    return torch.Tensor.detach(value).to("cpu", torch.float64).numpy().copy()


def to_plain(value, what, depth=0):
    """Plain data for any output a task may return.

    Tensors and arrays become numpy arrays (float64 for floating point, int64 for integers,
    bool for booleans); strings, numbers, None, lists, tuples (as lists) and dicts stay what
    they are. Subclasses are reduced to their base type first, so an object whose __eq__
    always says True cannot pass for a right answer.
    """
    if depth > 20:
        raise ProbeFailure(f"{what} is nested too deeply to compare")
    if isinstance(value, torch.Tensor):
        tensor = torch.Tensor.detach(value).to("cpu")
        if tensor.dtype.is_floating_point:
            return tensor.to(torch.float64).numpy().copy()
        if tensor.dtype == torch.bool:
            return tensor.numpy().copy()
        return tensor.to(torch.int64).numpy().copy()
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        if kind not in "biuf":
            raise ProbeFailure(f"{what}: cannot compare an array of {value.dtype}")
        return np.array(value, dtype={"f": np.float64, "b": np.bool_}.get(kind, np.int64))
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, (int, np.integer)):
        return int.__index__(value) if isinstance(value, int) else int(value)
    if isinstance(value, (float, np.floating)):
        return float.__float__(value) if isinstance(value, float) else float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (list, tuple)):
        items = list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)
        return [to_plain(v, what, depth + 1) for v in items]
    if isinstance(value, dict):
        return {str.__str__(str(k)): to_plain(v, what, depth + 1) for k, v in dict.items(value)}
    raise ProbeFailure(f"{what}: cannot compare a value of type {type(value).__name__}")


def describe_attribute(module, name):
    """A short, comparable description of one attribute that the contract pins down."""
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
    if isinstance(value, (nn.ModuleList, nn.Sequential)):
        kinds = sorted({type(m).__name__ for m in value})
        distinct = len({id(m) for m in value})
        return (f"nn.{type(value).__name__} of {len(value)} {'/'.join(kinds) or 'modules'} "
                f"({distinct} distinct objects)")
    if isinstance(value, nn.Embedding):
        return f"nn.Embedding({value.num_embeddings}, {value.embedding_dim})"
    if isinstance(value, nn.Dropout):
        return f"nn.Dropout(p={value.p})"
    if isinstance(value, torch.Tensor):
        return f"a plain tensor attribute of shape {tuple(value.shape)} (not a registered buffer)"
    if isinstance(value, nn.Module) and type(value).__module__.startswith("torch.nn"):
        return f"nn.{type(value).__name__}"
    return f"a {type(value).__name__}"


# ------------------------------------------------------------------------------------------
# The device pass
# ------------------------------------------------------------------------------------------

_aten = torch.ops.aten
# Operations that CUDA itself accepts with CPU tensors among GPU ones.
_CROSS_DEVICE_OK = {_aten.index, _aten.index_put, _aten.index_put_, _aten._index_put_impl_, _aten.copy_}
# Writes into their first argument: (operation, where the written values are). Copying the device's values
# into a CPU tensor works on a GPU, but leaves them on the CPU, where the next operation mixes them with
# the device's (a cache preallocated without device=, filled with cache[:, :, i] = k); on meta the copy
# itself fails, which would hide that: it counts as the mix.
_WRITES = {_aten.copy_: 1, _aten.index_put: 2, _aten.index_put_: 2, _aten._index_put_impl_: 2}


class _DeviceMixGuard(TorchDispatchMode):
    """Refuse any operation that mixes a meta tensor with a CPU tensor of one or more dims.
    cpu_inputs: {name: tensor} handed over on the CPU for the code to move (named if they stay).
    module: whether the code under test is an nn.Module (its advice speaks of forward and buffers)
    or a function (its advice speaks of the tensors it makes and the inputs it moves)."""

    def __init__(self, cpu_inputs=None, module=True):
        super().__init__()
        self.cpu_inputs = {} if cpu_inputs is None else cpu_inputs  # filled while the probe runs
        self.module = module

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func.overloadpacket
        if packet in _WRITES and len(args) > _WRITES[packet]:
            target, values = args[0], args[_WRITES[packet]]
            if isinstance(target, torch.Tensor) and isinstance(values, torch.Tensor) \
                    and target.device.type == "cpu" and target.dim() > 0 and values.device.type == META:
                raise DeviceMixError(_device_mix_message(func, target, self._input_named(target), write=True,
                                                         module=self.module))
        if packet not in _CROSS_DEVICE_OK:
            tensors = list(_tensors_in(args)) + list(_tensors_in(tuple(kwargs.values())))
            if any(t.device.type == META for t in tensors):
                stray = [t for t in tensors if t.device.type == "cpu" and t.dim() > 0]
                if stray:
                    raise DeviceMixError(_device_mix_message(func, stray[0], self._input_named(stray[0]),
                                                             module=self.module))
        return func(*args, **kwargs)

    def _input_named(self, tensor):
        """The name of the handed-over CPU input that `tensor` is (or is a view of), or None."""
        storage = tensor.untyped_storage().data_ptr()
        return next((name for name, given in self.cpu_inputs.items()
                     if given.untyped_storage().data_ptr() == storage), None)


def _tensors_in(values):
    """The tensors among an operation's arguments (ATen arguments nest only in lists and tuples;
    a plain loop, since pytree's general walk costs more than the check itself)."""
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors_in(value)


# The case line under the message says that the meta device stands in for a GPU.
_ON_A_GPU = "(on a GPU: \"Expected all tensors to be on the same device\")"


def _device_mix_message(func, stray, input_name=None, write=False, module=True):
    """One short message: what met what, in which operation, and the fix for a module or a function."""
    operation = str(func.overloadpacket).replace("aten.", "")
    shape = tuple(stray.shape)
    if input_name:
        return (f"{input_name} was handed to your code on the CPU and reached `{operation}` still there "
                f"{_ON_A_GPU}: move it first with {input_name}.to(device)")
    made = "a tensor your module makes" if module else "a tensor your function makes"
    fix = ("give it device=x.device in forward, or make it a buffer in __init__ (self.register_buffer), which "
           ".to(device) moves"
           if module else "give it device=idx.device (the device of what it meets), or use .to(device)")
    if write:
        return (f"your code writes the device's values into a CPU tensor of shape {shape} (`{operation}`) "
                f"{_ON_A_GPU} — {made} (torch.zeros, torch.empty, ...) is on the CPU unless told: {fix}")
    return (f"a CPU tensor of shape {shape} meets the device's tensors in `{operation}` {_ON_A_GPU} — {made} "
            f"(torch.tensor, torch.arange, ...) is on the CPU unless told: {fix}")


def load_meta_kernels():
    """Import what PyTorch's Python meta kernels import on first use (see the module docstring)."""
    import torch._dynamo  # noqa: F401


def device_pass_supported(case):
    return getattr(kind_of(case), "device_pass", False)


# ------------------------------------------------------------------------------------------
# Running probes
# ------------------------------------------------------------------------------------------

def kind_of(case):
    """The kind (the kinds/ package) that the task's chapter module registered for this case's kind."""
    try:
        return task_spec(case.task).probes[case.kind]
    except KeyError:
        raise KeyError(f"task {get_task(case.task).id} has no probe for cases of kind {case.kind!r}") from None


def run_probe(obj_or_names, case: Case, ctx=None):
    """Exercise a student's code on `case`; return the observations.

    obj_or_names: the task's object (its first graded name), or a dict of graded names.
    ctx: a ProbeContext (earlier names, scratch folder, ...); a default one when None.
    Exceptions raised by the code under test are caught and recorded under "error", with
    the step that was running and the student's line, so one broken case never hides others.
    """
    task = get_task(case.task)
    names = obj_or_names if isinstance(obj_or_names, dict) else {task.names[0]: obj_or_names}
    ctx = (ctx or ProbeContext()).for_case(case, names)
    kind = kind_of(case)
    probe = Probe(case, ctx)
    watch = _ArgmaxAcrossRows()
    try:
        refuse_empty_bodies(names)
        if probe.meta:
            if getattr(kind, "device_pass", False):
                load_meta_kernels()
                in_module = isinstance(names[task.names[0]], type) and issubclass(names[task.names[0]], nn.Module)
                with _DeviceMixGuard(probe.cpu_inputs, module=in_module):
                    kind.probe(probe)
        else:
            with watch:
                kind.probe(probe)
    except DeviceMixError as exc:
        probe.obs = {"error": describe_exception(exc, probe.step)}
    except (Exception, SystemExit) as exc:  # student code may raise anything, even SystemExit
        if probe.meta:
            # Not a device problem (e.g. .item() has no value on meta): the CPU run judges it.
            probe.obs = {}
        else:
            probe.obs["error"] = describe_exception(exc, probe.step)
    finally:
        ctx.cleanup()
    if watch.noticed:
        probe.obs[NOTICED] = watch.noticed
    return probe.obs


class _ArgmaxAcrossRows:
    """While it is entered, torch.argmax and Tensor.argmax note (in `noticed`) the first call
    from the student's code that runs across the rows of a tensor of two or more dimensions:
    over dim 0, whose entries are the batch's rows in every task of the course, or with no dim
    over several rows at once (one index into them all, flattened). Nothing else changes."""

    def __init__(self):
        self.noticed = ""

    def __enter__(self):
        self._function, self._method = torch.argmax, torch.Tensor.__dict__.get("argmax")
        original = torch.argmax
        watch = self

        def argmax(input, dim=None, keepdim=False, **kwargs):
            dim = kwargs.pop("axis", dim)  # NumPy's name, which torch accepts too
            watch._look(input, dim)
            return original(input, dim=dim, keepdim=keepdim, **kwargs)

        def argmax_method(self, dim=None, keepdim=False, **kwargs):
            return argmax(self, dim, keepdim, **kwargs)

        torch.argmax, torch.Tensor.argmax = argmax, argmax_method
        return self

    def __exit__(self, *exc):
        torch.argmax = self._function
        if self._method is None:
            del torch.Tensor.argmax  # back to the method Tensor inherits from torch._C
        else:
            torch.Tensor.argmax = self._method
        return False

    def _look(self, tensor, dim):
        if self.noticed or not isinstance(tensor, torch.Tensor) or tensor.dim() < 2:
            return
        across_rows = dim is not None and dim in (0, -tensor.dim())
        all_at_once = dim is None and tensor.numel() > tensor.shape[-1]  # more than one row
        if not (across_rows or all_at_once):
            return
        here = os.path.abspath(__file__)
        # The frame that called argmax: the first one outside this watch (at most three deep here).
        caller = next(f for f in reversed(traceback.extract_stack(limit=4)) if os.path.abspath(f.filename) != here)
        if is_library_path(caller.filename):
            return  # the course's or a library's own call, not the student's
        shape = "(" + ", ".join(str(size) for size in tensor.shape) + ")"
        line = f" at line {caller.lineno}" + (f", {shown_code(caller.line.strip())}" if caller.line else "")
        if across_rows:
            self.noticed = (f"your code takes the argmax over dim 0 of a {shape} tensor{line}, which picks a row "
                            f"per column: a row's own choice is argmax(..., dim=-1) (keepdim=True keeps a column)")
        else:
            self.noticed = (f"your code takes the argmax of a whole {shape} tensor at once (no dim){line}: one index "
                            f"into all its rows flattened; a row's own choice is argmax(..., dim=-1) (keepdim=True "
                            f"keeps a column)")


# The methods a graded class needs (by the contract's signatures) that must do something: one whose
# body is empty is a stub left in place. Other methods may be empty on purpose (a hook a student
# never calls), and so may __init__ (a class with nothing to store; a module's empty __init__ has
# its own message: call super().__init__()).
NEEDED_METHODS = ("forward", "encode", "decode", "__len__", "__getitem__", "reset_cache")


def refuse_empty_bodies(names):
    """Raise NothingImplemented when a graded function, or a needed method of a graded class,
    does nothing yet (its body is only `pass`, `...`, a docstring or a bare `return`): the
    student then reads "not implemented yet" instead of what a stub's None led to further on."""
    for name, obj in names.items():
        if isinstance(obj, type):
            for method in NEEDED_METHODS:
                if does_nothing(vars(obj).get(method)):
                    raise NothingImplemented(f"{name}.{method} does nothing yet (its body is only `pass` "
                                             f"or a docstring)")
        elif does_nothing(obj):
            raise NothingImplemented(f"the body of {name} does nothing yet (it is only `pass` or a docstring, "
                                     f"so it returns None)")


def does_nothing(function):
    """Whether a Python function's body is empty: its bytecode only returns None (what `pass`,
    `...`, a lone docstring and a bare `return` all compile to)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    steps = [(i.opname, i.argval) for i in dis.get_instructions(code)
             if i.opname not in ("RESUME", "NOP", "CACHE", "COPY_FREE_VARS", "MAKE_CELL")]
    return steps in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def observe(names, cases, ctx=None, scratch=None, earlier=None):
    """Probe the cases in order, stopping at the first one where the code raised.

    names: the task's object or a dict of its graded names; cases: Case objects or their
    to_data() dicts. The verdict reports the first failing case, which is that one or an
    earlier one, so the rest would not change the grade; a memory bomb or a slow failure
    runs only once.
    """
    ctx = ctx or ProbeContext(earlier=earlier, scratch=scratch)
    observations = []
    for case in cases:
        if isinstance(case, dict):
            case = Case.from_data(case)
        observations.append(run_probe(names, case, ctx))
        if "error" in observations[-1]:
            break
    return observations


_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # terminal colour codes (torch.load's errors have some)


def describe_exception(exc, step):
    return {
        "type": type(exc).__name__,
        "message": _ANSI.sub("", str(exc))[:600],
        "step": step,
        "where": _student_line(exc),
        "ours": isinstance(exc, ProbeFailure),
    }


def is_library_path(filename):
    """Whether a traceback frame's file is torch's, numpy's, the course package's or another
    installed package's, rather than the student's code."""
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return path.startswith(_LIBRARY_DIRS) or "site-packages" in path


def shown_code(code, width=60):
    """A line of the student's code as a message quotes it: cut to `width` characters, enough to
    say where (the whole line is in their cell)."""
    return f"{code[:width - 3].rstrip()}..." if len(code) > width else code


def _student_line(exc):
    """'line 12: attn = ...' for the innermost frame outside torch, numpy and gptcourse."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if is_library_path(frame.filename):
            continue
        where = f"line {frame.lineno}: {frame.line.strip()}" if frame.line else f"line {frame.lineno}"
    return where
