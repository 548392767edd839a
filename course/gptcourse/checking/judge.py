"""Decide whether a task's observations are right, and say what is wrong in plain words.

`judge` compares what a probe observed on the student's code (`got`) with what it observed
on the reference (`expected`). When they differ it tries, in order:
1. a known mistake whose observations match the student's ("looks like you ...");
2. a property check that explains the symptom (rows not summing to 1, future tokens
   leaking into the past, ...);
3. the plain difference (shape, largest difference and where).
It works on plain data only, so the grader can run it in a process that never ran
student code. Besides the message it returns a `Finding` (gptcourse/checking/findings.py): the same
verdict as fields, which the class report groups on instead of reading the sentence back. It is generic: what is specific to a chapter (names of observations, hints,
how a random output is judged) comes from the chapter module and the task's kinds.
"""
import functools
import re
from dataclasses import replace

import numpy as np

from .findings import Finding
from .chapters import task_spec
from .probes import NOTICED, kind_of, shown_code
from .tasks import chapter_module, get_task, tasks_before

# What the generic observations mean, for messages; chapter modules add their own.
KEY_NAMES = {
    "structure": "Module attributes",
    "extra_parameters": "Module parameters",
    "out": "Output of forward (eval mode)",
    "out_again": "Output of a second forward call in eval mode",
    "out_future_prefix": "Output up to position t when later tokens change",
    "out_train": "Output in train mode with dropout=0.0",
    "out_eval": "Output in eval mode (after a train-mode pass)",
    "out_eval_again": "Output of a second forward call in eval mode",
    "raises": "Check that the constructor refuses invalid arguments",
    "len": "len(dataset)",
    "num_batches": "Number of batches, len(loader)",
    "file_written": "Whether a file was written",
    "read_back": "What was read back from the file",
    "returned": "The returned value",
    "optimizer_calls": "Calls of optimizer.step() and optimizer.zero_grad()",
    "training_mode_after": "The model's mode afterwards (model.training)",
    "forward_calls": "The model's forward calls by mode",
    "lr_per_step": "The learning rate at each optimizer step",
    "grad_norm_per_step": "The gradient norm at each optimizer step",
    "results": "The results, call by call",
    "raised": "Whether the call raised an error",
    "message_ok": "Whether the error message says what is wrong",
    "num_draws": "Number of samples",
    "num_parameters": "Number of parameters",
    "children_parameters": "Number of parameters of each part",
}

# Observation keys with a variable part: prefix -> how to name them.
KEY_PREFIXES = {
    # Training backpropagates through every task's code, so the check does too: say so, since the task
    # itself may be a forward pass only.
    "grad/": lambda rest: f"The gradient reaching {rest} when the check backpropagates through your code",
    "after/": lambda rest: f"The input {rest} after the call",
    "init/": lambda rest: f"The initial value of {rest} (right after creating the module)",
    "item/": lambda rest: f"dataset[{rest}]",
    "batch/": lambda rest: f"Batch {rest} of the loader",
    "param/": lambda rest: f"Parameter {rest} afterwards",
    "call_": lambda rest: "The result of call {}, .{}(...)".format(int(rest.split("/")[0]) + 1, rest.split("/", 1)[-1]),
}

# Exception text -> what probably happened. The chapter's hints are tried first; the first
# match wins.
ERROR_HINTS = [
    (r"a leaf Variable that requires grad is being used in an in-place operation|"
     r"modified by an inplace operation",
     "your code changes a tensor in place (an operation ending in _ such as masked_fill_, or an "
     "assignment like x[...] = ...) that it must leave alone: compute a new tensor instead "
     "(masked_fill without the underscore)"),
    (r"was handed to your code on the CPU",
     "inputs arrive on the CPU, the way a data loader hands them over: move every one of them to `device` "
     "before it meets the model or its outputs"),
    (r"same device|Expected all tensors to be on the same device|device type",
     "a tensor is on the wrong device: tensors created inside forward stay on the CPU; register "
     "them with self.register_buffer so .to(device) moves them, or create tensors with device=x.device"),
    (r"Expected size for first two dimensions of batch2 tensor|Expected batch2_sizes",
     "a batched matrix product (@ or torch.bmm on 3-D tensors) whose shapes do not line up: in (b, n, m) @ "
     "(b, m, p) the batch sizes and both m's must agree; print the .shape of each side and check what you transpose"),
    (r"view size is not compatible|view\(\) on a non-contiguous|use \.reshape|spans across two contiguous subspaces",
     "after a transpose the tensor is not contiguous: call .contiguous() before .view (or use .reshape)"),
    (r"mat1 and mat2 shapes cannot be multiplied|size mismatch|shapes cannot be multiplied",
     "a matrix product with mismatched shapes: check which dimensions you transpose, and remember "
     "that nn.Linear stores its weight as (out_features, in_features)"),
    (r"must match the size of tensor|The size of tensor a",
     "tensor sizes do not match: print the .shape of both operands and check which dimensions "
     "you transpose or index"),
    (r"expected scalar type|dtype|Found dtype",
     "mixed dtypes: create new tensors with the input's dtype (and device), e.g. torch.ones(..., "
     "dtype=x.dtype, device=x.device)"),
    (r"before Module.__init__\(\) call|has no attribute '_modules'|has no attribute '_parameters'",
     "call super().__init__() first in your __init__"),
    (r"positional argument|unexpected keyword argument|takes \d+ positional",
     "the signature differs from the task's: check the names and order of the arguments"),
    (r"Tensors must have same number of dimensions|stack expects each tensor to be equal size",
     "tensors joined with torch.cat or torch.stack must have the same shape apart from the joined dimension "
     "(torch.stack: the same shape, full stop): print the .shape of each"),
    (r"only integer tensors of a single element can be converted to an index|too many indices for tensor",
     "an index that does not fit the tensor: print the .shape of the tensor you index and of the index"),
    (r"index out of range in self",
     "an embedding lookup with an index past the end of its table (nn.Embedding(n, d) takes 0 .. n - 1): "
     "positions count from 0, torch.arange(num_tokens), and every token id must be below vocab_size"),
    (r"Dimension out of range|dimension .* out of range",
     "a dimension index out of range: does your code handle batched input (batch, tokens, dim)?"),
    (r"\.T on a tensor|The use of `x\.T` on tensors of dimension other than 2",
     "`.T` only works on 2-D tensors: use .transpose(-2, -1) to swap the last two dimensions"),
    (r"SystemExit", "your code tried to exit the Python process"),
    (r"can't allocate memory|out of memory|MemoryError|Cannot allocate memory",
     "your code tried to allocate far more memory than this task needs"),
]

_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


def _chapter(task_id):
    return chapter_module(get_task(task_id).chapter)


_STEP = re.compile(r"^step (\d+)(.*?): (.*)$")


def _step_name(key):
    """A step of a sequence of calls (kinds.ModuleSteps): "step 2: tokens 1 to 1, use_cache=True"
    reads "the output of step 2 (tokens 1 to 1, use_cache=True)"."""
    found = _STEP.match(key)
    if not found:
        return None
    number, mode, what = found.groups()
    if what.endswith(" is None") or " is None, " in what:
        return f"after step {number}{mode}, whether {what}"
    refusal = " (past the end: must raise)"
    if what.endswith(refusal):
        return f"step {number}{mode} ({what[:-len(refusal)]}, past the end: it must raise)"
    return f"the output of step {number}{mode} ({what})"


def key_name(task_id, key):
    names = {**KEY_NAMES, **getattr(_chapter(task_id), "KEY_NAMES", {})} if task_id else KEY_NAMES
    if key in names:
        return names[key]
    if _step_name(key):
        return _step_name(key)
    for prefix, name in KEY_PREFIXES.items():
        if key.startswith(prefix):
            return name(key[len(prefix):])
    return key


def not_defined_hint(name, task_id=None):
    """A missing name: an earlier task's graded name comes in differently from a helper."""
    if task_id:
        task = get_task(task_id)
        for earlier in tasks_before(task.id):
            if name in earlier.names:
                if earlier.chapter != task.chapter:
                    return (f"{name} is the graded name of task {earlier.id} (chapter {earlier.chapter}): "
                            f"run the carry-over cell near the top of this notebook, which brings in your "
                            f"{name} from {earlier.chapter}.ipynb (or paste it there)")
                return f"{name} is the graded name of task {earlier.id}: run that task's cell first"
    return ("a name is not defined: graded cells run with the setup cell's imports and the "
            "earlier graded names only; define helpers inside your solution cell")


def error_hint(error, task_id=None):
    text = f"{error['type']}: {error['message']}"
    missing = _NOT_DEFINED.search(text)
    if missing:
        return not_defined_hint(missing.group(1), task_id)
    hint, _ = _chapter_error_hint(text, task_id, error)
    if hint or error.get("ours"):
        return hint  # a message of the course's own probes is complete: no generic advice after it
    for pattern, hint in ERROR_HINTS:
        if re.search(pattern, text):
            return hint
    if error["type"] in ("RuntimeError", "IndexError") and error.get("where"):
        # PyTorch's own words, about its operation rather than the task: where to look, at least.
        return ("these are PyTorch's words about the operation on the line shown; print the .shape (and .dtype) "
                "of each tensor that line uses and compare them with what the task gives your code")
    return ""


def _chapter_error_hint(text, task_id, error=None):
    """(hint, whether it replaces the error's own message) from the chapter's ERROR_HINTS.

    An entry is (pattern, hint, task ids or None), and optionally more items: "instead" when the
    library's own message would mislead (torch.load's advice to pass weights_only=False), and a
    dict of conditions on the error's other fields, {"step": regex, "where": regex}: the step
    that was running ("calling forward on tokens 0 to 2, use_cache=False (step 9)") and the
    student's line ("line 35: assert ..."); an entry with conditions applies only when they match."""
    chapter_hints = getattr(_chapter(task_id), "ERROR_HINTS", []) if task_id else []
    for pattern, hint, tasks, *extra in chapter_hints:
        conditions = next((item for item in extra if isinstance(item, dict)), {})
        if (tasks is None or task_id in tasks) and re.search(pattern, text) and all(
                re.search(regex, str((error or {}).get(field) or "")) for field, regex in conditions.items()):
            return hint, "instead" in extra
    return "", False


def describe_error(error, task_id=None):
    return error_finding(error, task_id)[0]


@functools.lru_cache(maxsize=None)
def _test_model_classes():
    """The names of the check's own small models (gptcourse/checking/chapters/toys.py)."""
    import torch

    from .chapters import toys

    return tuple(name for name, value in vars(toys).items()
                 if isinstance(value, type) and issubclass(value, torch.nn.Module) and value.__module__ == toys.__name__)


def plain_error_text(text):
    """An error's text without the check's own class names: Python's "'NestedModel' object has no
    attribute 'trf_blocks'" reads "the test model has no attribute 'trf_blocks'"."""
    for name in _test_model_classes():
        text = re.sub(rf"'{name}' object", "the test model", text)
        text = re.sub(rf"\b{name}\b", "the test model", text)
    return text


def _shown_line(where):
    """'line 12: attn = ...' with the student's line cut short (probes.shown_code). A line that
    raises the student's own error (raise, assert) is not quoted: their message follows."""
    number, _, code = where.partition(": ")
    if re.match(r"(raise|assert)\b", code):
        return number
    return f"{number}: {shown_code(code)}" if code else where


def error_finding(error, task_id=None, noticed=""):
    """(message, Finding) for an exception; `noticed`, what the probe saw the code do (an argmax
    across rows, say), is the hint when there is one: a fact of this run, before any guess."""
    message, finding = _error_finding(error, task_id, noticed)
    return plain_error_text(message), finding


def _error_finding(error, task_id=None, noticed=""):
    """(message, Finding) for an exception raised while a case ran (or a probe's own check on
    what the code did, error["ours"]: then there is no exception type, and its message says what)."""
    finding = Finding("error", error_type="" if error.get("ours") else error["type"], step=error["step"])
    if error["type"] == "NotImplementedError":
        return "not implemented yet — replace `raise NotImplementedError()` with your code", finding
    if error["type"] == "NothingImplemented":  # probes.refuse_empty_bodies: a stub left as `pass`
        return f"not implemented yet: {error['message']}", replace(finding, error_type="NotImplementedError")
    where = f" at {_shown_line(error['where'])}" if error.get("where") else ""
    hint, instead = _chapter_error_hint(f"{error['type']}: {error['message']}", task_id, error)
    if instead:
        return f"{error['type']} while {error['step']}{where} — {hint}", replace(finding, hint=hint)
    if error.get("ours"):
        message = f"while {error['step']}{where}: {error['message']}"
        finding = replace(finding, detail=error["message"])
    hint = noticed or error_hint(error, task_id)
    if not error.get("ours"):
        said = str(error["message"] or "")
        if hint and "\n" in said.strip():
            # A library's several lines of advice: the course's hint says what they mean here. A
            # first line that announces the next ("Error(s) in loading state_dict ...:") keeps it.
            lines = said.strip().splitlines()
            said = lines[0] + (f" {lines[1].strip()[:160]}" if lines[0].endswith(":") else "")
        message = f"{error['type']} while {error['step']}{where}" + (f": {said}" if said else "")
    return (f"{message} — {hint}" if hint else message), replace(finding, hint=hint)


def tolerances(device):
    # GPU kernels sum in a different order than the CPU's: allow a little more.
    return (1e-4, 1e-4) if str(device).startswith("cuda") else (1e-4, 1e-5)


def _close(a, b, device="cpu"):
    """Equal observations: arrays within tolerance (NaN where NaN), floats likewise, the rest exactly."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype.kind != "f" and b.dtype.kind != "f":
            return bool(np.array_equal(a, b))
        rtol, atol = tolerances(device)
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], device) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, device) for x, y in zip(a, b))
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if numbers and (isinstance(a, float) or isinstance(b, float)):
        rtol, atol = tolerances(device)
        return bool(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return type(a) is type(b) and a == b


def _joined_another_way(shape, expected):
    """What a shape that holds the expected numbers arranged another way says: pieces stacked
    into a new dimension where they are joined along the last one, or a last dimension twice as
    long (two tensors joined where they are added). Only the shapes are compared."""
    shape, expected = tuple(shape), tuple(expected)
    if len(shape) == len(expected) + 1 and shape[:-2] == expected[:-1] and shape[-2] * shape[-1] == expected[-1]:
        return (f"one dimension more than expected, its last two ({shape[-2]} x {shape[-1]}) holding the expected "
                f"last one ({expected[-1]}): torch.stack makes a new dimension; torch.cat(..., dim=-1) joins the "
                f"pieces along the last one")
    if len(shape) == len(expected) and shape[:-1] == expected[:-1] and shape[-1] == 2 * expected[-1]:
        return ("the last dimension is twice as long as expected, as when two tensors of the expected shape are "
                "joined with torch.cat where they are to be added (+)")
    return ""


def _array_difference(name, got, expected):
    """(message, the sort of difference) between an observed array and the reference's."""
    if got is None:
        return (f"{name}: no gradient reached it — something in your code cuts the graph "
                f"(.detach(), .data, .item(), numpy, torch.no_grad())"), "no gradient reached it (the graph is cut)"
    if not isinstance(got, np.ndarray):
        return f"{name}: expected an array of shape {expected.shape}, got {type(got).__name__}", "not an array"
    if got.shape != expected.shape:
        joined = _joined_another_way(got.shape, expected.shape)
        return f"{name}: shape {got.shape}, expected {expected.shape}" + (f" — {joined}" if joined else ""), \
            "wrong shape"
    if got.dtype.kind != "f" or expected.dtype.kind != "f":
        where = tuple(int(i) for i in np.argwhere(got != expected)[0])
        return f"{name}: differs at index {list(where)} (yours {got[where]}, expected {expected[where]})", "wrong values"
    if np.isnan(got).any() and not np.isnan(expected).any():
        return f"{name}: NaN where numbers are expected", "NaN where numbers are expected"
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.array(np.abs(got.astype(np.float64) - expected.astype(np.float64)))  # 0-d stays an array
    # The same infinity (or NaN) on both sides is no difference; inf against a number, or NaN
    # against a number, is an infinite one (and is never folded into the largest float).
    diff[(got == expected) | (np.isnan(got) & np.isnan(expected))] = 0.0
    diff[np.isnan(diff)] = np.inf
    infinite = np.isinf(diff)
    if infinite.any():
        where = tuple(int(i) for i in np.argwhere(infinite)[0])
        count = int(infinite.sum())
        places = "1 position" if count == 1 else f"{count} positions"
        return (f"{name}: not the expected values at {places}, the first at index {list(where)}: "
                f"got {_number(got[where])}, expected {_number(expected[where])}"), "not the expected values"
    where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
    text = (f"{name}: not the expected values, largest difference {diff.max():.4g} at index "
            f"{list(where)} (yours {_number(got[where])}, expected {_number(expected[where])})")
    systematic = _systematic_difference(got, expected, diff)
    return (f"{text}; {systematic}" if systematic else text), "not the expected values"


def _systematic_difference(got, expected, diff):
    """A small difference that is no rounding noise: most entries off by about the same factor
    (a constant of the formula a little off, a squared or missing factor), said as such."""
    if diff.max() > 1e-2 * max(1.0, float(np.abs(expected).max())):
        return ""  # a large difference speaks for itself
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = got / expected
    usable = np.isfinite(ratio) & (np.abs(expected) > 1e-3 * max(1e-12, float(np.abs(expected).max())))
    if usable.sum() < 3:
        return ""
    ratios = ratio[usable]
    if np.ptp(ratios) < 1e-3 * abs(float(np.median(ratios))) and abs(float(np.median(ratios)) - 1) > 1e-5:
        return (f"every value is {float(np.median(ratios)):.6g} times the expected one: not rounding noise but "
                f"a constant of the formula slightly off (check each number your code writes out)")
    if (diff[usable] > 0).mean() > 0.9:
        return ("small, but nearly every value differs: more likely a constant of the formula slightly off "
                "(check each number your code writes out) than rounding noise")
    return ""


def _number(value):
    """-inf, inf, nan or the number with four significant digits."""
    value = float(value)
    return f"{value:.4g}" if np.isfinite(value) else str(value)


def _rounded(value):
    """The value with every float at four significant digits (a wall of 16-digit floats reads as
    noise), arrays as their shape."""
    if isinstance(value, float):
        return float(f"{value:.4g}") if np.isfinite(value) else value
    if isinstance(value, np.ndarray):
        return _ArrayShape(value.shape) if value.size > 6 else _rounded(value.tolist())
    if isinstance(value, (list, tuple)):
        return type(value)(_rounded(v) for v in value)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


class _ArrayShape:
    def __init__(self, shape):
        self.shape = tuple(shape)

    def __repr__(self):
        return f"an array of shape {self.shape}"


def _shown(value, limit=200):
    text = repr(_rounded(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _value_difference(name, got, expected):
    return _difference(name, got, expected)[0]


def _difference(name, got, expected):
    """(message, the sort of difference: "wrong shape", "a key is missing", ...) of an observation."""
    if isinstance(expected, np.ndarray):
        return _array_difference(name, got, expected)
    if isinstance(expected, dict) and isinstance(got, dict):
        text, sort = _dict_difference(got, expected)
    elif isinstance(expected, list) and isinstance(got, list):
        text, sort = _list_difference(got, expected)
    else:
        text, sort = f"expected {_shown(expected)}, got {_shown(got)}", "a different value"
    return f"{name}: {text}", sort


def _dict_difference(got, expected):
    """The first entry that differs (a missing key, then an unexpected one, then a value),
    and how many do: a vocabulary of 1,132 entries is never printed whole."""
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    changed = [k for k in expected if k in got and not _close(got[k], expected[k])]
    if missing:
        first = f"the key {_shown(missing[0], 60)} is missing (expected {_shown(expected[missing[0]], 60)})"
        sort = "a key is missing"
    elif extra:
        first = f"the key {_shown(extra[0], 60)} should not be there (yours maps it to {_shown(got[extra[0]], 60)})"
        sort = "an unexpected key"
    else:
        key = changed[0]
        first = f"[{_shown(key, 60)}] is {_shown(got[key], 60)}, expected {_shown(expected[key], 60)}"
        others = len(changed) - 1
        more = f"; {others} other entr{'y differs' if others == 1 else 'ies differ'} too" if others else ""
        return f"{first}{more}", "wrong entries"
    counts = [f"{len(v)} {what}" for v, what in ((missing, "missing"), (extra, "unexpected"),
                                                  (changed, "with other values")) if v]
    return f"{first}; {len(got)} entries, expected {len(expected)}: {', '.join(counts)}", sort


def _list_difference(got, expected):
    """The first position that differs, and the lengths when they differ."""
    lengths = f"length {len(got)}, expected {len(expected)}; " if len(got) != len(expected) else ""
    sort = "wrong length" if lengths else "wrong items"
    for i, (have, want) in enumerate(zip(got, expected)):
        if not _close(have, want):
            return f"{lengths}first difference at index {i}: yours {_shown(have, 80)}, expected {_shown(want, 80)}", sort
    if len(got) > len(expected):
        return f"{lengths}the extra items start with {_shown(got[len(expected)], 80)}", sort
    if len(got) < len(expected):
        return f"{lengths}the missing items start with {_shown(expected[len(got)], 80)}", sort
    return f"expected {_shown(expected)}, got {_shown(got)}", "a different value"


def _attribute_differences(got, expected):
    """One sentence per kind of difference from the contract's description: attributes that are
    wrong the same way are named together."""
    kinds = {}
    for attr, want in expected.items():
        have = got.get(attr, "missing")
        if have != want:
            kinds.setdefault((want, have), []).append(f"`{attr}`")
    sentences = []
    for (want, have), attrs in kinds.items():
        if len(attrs) == 1:
            sentences.append(f"{attrs[0]} should be {want}, yours is {have}")
        else:
            sentences.append(f"{', '.join(attrs[:-1])} and {attrs[-1]} should each be {want}, yours are {have}")
    return sentences


def property_hint(task_id, key, got_obs, expected_obs, case):
    """The first property hint (the task's own, then its kind's) that explains the symptom."""
    for hint in list(task_spec(task_id).hints) + list(kind_of(case).hints):
        text = hint(key, got_obs, expected_obs, case)
        if text:
            return text
    return ""


# ------------------------------------------------------------------------------------------

def judge(task_id, case, got, expected, mistakes=()):
    """None when `got` matches `expected`; otherwise one message for the student.

    mistakes: (message, observations) pairs of the known mistakes on the same case, or a
    function returning them (called only when something is wrong).
    """
    return judge_finding(task_id, case, got, expected, mistakes)[0]


def judge_detail(task_id, case, got, expected, mistakes=()):
    """(message or None, whether the problem is an exception the code raised)."""
    problem, finding = judge_finding(task_id, case, got, expected, mistakes)
    return problem, bool(finding and finding.kind == "error")


def judge_finding(task_id, case, got, expected, mistakes=()):
    """(message, Finding), or (None, None) when `got` is right.

    expected["internals/alternatives"], when present, lists the observations of other
    readings of the contract that are just as right (where it leaves a detail open): matching
    any of them passes; the message is still the one against the reference.
    """
    problem, finding = _judge_against(task_id, case, got, expected, mistakes)
    if problem and finding.kind != "error":
        for alternative in expected.get("internals/alternatives", ()):
            if _judge_against(task_id, case, got, alternative, ())[0] is None:
                return None, None
    return problem, finding


def _judge_against(task_id, case, got, expected, mistakes):
    task = get_task(task_id)  # unknown ids fail loudly
    kind = kind_of(case)
    # A function that returned None explains everything after it: say that first.
    for key in kind.returned:
        if key in got and got[key] is None and expected.get(key) is not None:
            name = key_name(task.id, key)
            return (f"{name}: your function returned None — is its `return` statement missing?",
                    Finding("wrong result", observed=name, difference="returned None"))
    # A changed input explains the wrong outputs that follow from it: report it first.
    for key, want in expected.items():
        if key.startswith("after/") and key in got and not _close(got[key], want, case.device):
            return _explain(task.id, kind, key, got[key], want, got, expected, case, mistakes)
    for key, want in expected.items():
        if key.startswith("internals/"):
            continue
        if key not in got and "error" in got:
            return error_finding(got["error"], task.id, noticed=_noticed(got))
        if kind.owns(key):
            problem = kind.judge_key(key, got, expected, case)
            if problem:
                return problem, _owned_finding(task.id, key, problem)
            continue
        if key not in got:
            name = key_name(task.id, key)
            return f"{name}: could not be observed", Finding("wrong result", observed=name,
                                                              difference="could not be observed")
        have = got[key]
        if not _close(have, want, case.device):
            return _explain(task.id, kind, key, have, want, got, expected, case, mistakes)
    if "error" in got and "error" not in expected:
        return error_finding(got["error"], task.id, noticed=_noticed(got))
    return None, None


def _noticed(got):
    """What the probe saw the code do that explains a failure (probes.NOTICED), or ""."""
    noticed = got.get(NOTICED)
    return noticed[:400] if isinstance(noticed, str) else ""


def _owned_finding(task_id, key, problem):
    """The finding of a kind's own sentence about an observation it judges itself. Some keys have
    no name for students (a kind's internal "train_0"): the sentence then stands alone. A sentence
    that starts by naming the observation does not repeat it in `difference`."""
    name = key_name(task_id, key)
    observed = name if name != key else ""
    return Finding("wrong result", observed=observed, difference=problem.removeprefix(f"{name}: "))


def _same_as_mistake(got, expected, mistake_obs, device):
    """A known mistake is named only when the student's observations are the mistake's: wrong
    where the student's code is wrong (one equal observation can come from another mistake), and
    wrong where the mistake would be (a mistake that spoils more than the student's code did is
    another mistake). Observations the student's code never reached (it raised) are not compared."""
    compared = [k for k in mistake_obs if k in got and not k.startswith("internals/")]
    wrong = [k for k in compared
             if not _close(got[k], expected.get(k), device) or not _close(mistake_obs[k], expected.get(k), device)]
    return bool(wrong) and all(_close(got[k], mistake_obs[k], device) for k in wrong)


def _swapped_pair(have, want, device):
    """Two returned values in each other's places: said only when swapping them back gives exactly
    the expected values."""
    if not (isinstance(have, list) and isinstance(want, list) and len(have) == len(want) <= 8):
        return ""
    for i in range(len(want)):
        for j in range(i + 1, len(want)):
            swapped = list(have)
            swapped[i], swapped[j] = have[j], have[i]
            if not _close(want[i], want[j], device) and _close(swapped, want, device):
                return (f"items {i + 1} and {j + 1} of what your function returns are in each other's places "
                        f"(swapped back, they are exactly the expected values): check the order of your return "
                        f"statement, and of the values your code passes along before it")
    return ""


def _explain(task_id, kind, key, have, want, got, expected, case, mistakes):
    """(message, Finding) for one observation that differs from the reference's."""
    name = key_name(task_id, key)
    wrong = Finding("wrong result", observed=name)
    if key == "structure":
        hint = property_hint(task_id, key, got, expected, case)
        differences = "; ".join(_attribute_differences(have, want))
        return (f"attributes differ from what the task asks for: {differences}" + (f" — {hint}" if hint else ""),
                replace(wrong, difference=differences, hint=hint))
    if key == "extra_parameters":
        what = kind.messages.get(key, 'your module has parameters the task does not list')
        return f"{what}: {', '.join(have)}", replace(wrong, difference=what)
    if key.startswith("after/") and isinstance(want, (dict, list)):
        change, _ = _difference(f"the {key[6:]} it was given, after the calls", have, want)
        return (f"your code changed the {key[6:]} it was given: {change.split(': ', 1)[1]} — the caller's "
                f"{key[6:]} must stay as it was: keep anything extra in a copy of your own (dict(...))"), \
            replace(wrong, difference="changed its input in place")
    if key.startswith("after/"):
        return (f"your code changed its input {key[6:]} in place (for example with masked_fill_ on the "
                f"argument): compute a new tensor instead, the caller's data must stay as it was"), \
            replace(wrong, difference="changed its input in place")
    if key in kind.messages:
        return kind.messages[key], replace(wrong, difference=kind.messages[key])
    # A gradient that never arrived says more than any known mistake that also lacks one.
    cut_graph = have is None and isinstance(want, np.ndarray)
    # What the code was seen doing comes before any pattern's guess: it is the hint, unguessed.
    noticed = "" if cut_graph else _noticed(got)
    guesses = [] if cut_graph or noticed else mistakes() if callable(mistakes) else mistakes
    for message, mistake_obs in guesses:
        if key in mistake_obs and _same_as_mistake(got, expected, mistake_obs, case.device):
            return f"{name}: wrong — it looks like {message}", Finding("known mistake", observed=name, mistake=message)
    swapped = "" if noticed else _swapped_pair(have, want, case.device)
    if swapped:
        return f"{name}: {swapped}", replace(wrong, difference="two values in swapped order", hint=swapped)
    hint = noticed or property_hint(task_id, key, got, expected, case)
    difference, sort = _difference(name, have, want)
    return (f"{difference} — {hint}" if hint else difference), replace(wrong, difference=sort, hint=hint)


# ------------------------------------------------------------------------------------------
# Laying a failure out for a reader

# The first line of a failure says which task failed and what: short enough to read in one
# breath. What the difference is and why come on lines of their own, the case last.
HEADLINE_WIDTH = 160

_DEVICE_WORDS = {"cpu": "the CPU", "cuda": "the GPU",
                 "meta": "PyTorch's meta device, standing in for a GPU"}


def device_words(device):
    return _DEVICE_WORDS.get(str(device).split(":")[0], str(device))


def laid_out(opening, problem, case_label, device):
    """`opening` ("Task <id> (<names>) failed") and what failed on the first line,
    then the details and the reason each on lines of their own, and the case last.

    A problem reads "what: details — why"; its first line keeps "what" whole when it fits."""
    first, _, rest = problem.partition("\n")
    what, _, why = first.partition(" — ")
    details = ""
    if len(opening) + 2 + len(what) > HEADLINE_WIDTH and ": " in what:
        what, details = what.split(": ", 1)
    joiner = " " if what.startswith("while ") else ": "
    lines = [f"{opening}{joiner}{_lowercased(what)}"]
    lines += [_capitalised(part) for part in (details, why, rest) if part]
    lines.append(f"(Checked on {case_label}, on {device_words(device)}.)")
    return "\n".join(lines)


def _lowercased(text):
    """"The returned value" -> "the returned value"; "NaN", "IndexError" and `names` stay."""
    word = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if word[:1].isupper() and word[1:].isalpha() and word[1:].islower() else text


# A line that starts with the student's code (the line that raised): an assignment or a statement.
_CODE_LINE = re.compile(r"^(?:[A-Za-z_][\w.\[\]]*(?:,\s*[A-Za-z_][\w.\[\]]*)*\s*[-+*/%|&^@]?=(?!=)"
                        r"|(?:return|raise|assert|yield|del|await)\b)")


def _capitalised(text):
    """A sentence's first letter, unless it starts with a name from code (top_k_logits, idx) or is
    the student's line of code ("block = gpt.trf_blocks[b]: index 2 is out of range")."""
    word = text.split(" ", 1)[0].rstrip(":,;")
    if _CODE_LINE.match(text):
        return text
    return text[:1].upper() + text[1:] if word.isalpha() and word.islower() else text
