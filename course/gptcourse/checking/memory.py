"""Running out of memory: how a failed allocation looks, and what the student is told.

One place for the words, so that the course grader (grader/grading/verdict.py), nbgrader's hidden tests
(grader/nbgrading/bridge.py, in the kernel) and the self-check (`check(...)`) say the same thing
when code uses more memory than it may. Plain Python: no torch, no Jupyter.
"""
import re

# What an allocation that failed under a memory cap looks like: Python's MemoryError, or torch's
# allocator (std::bad_alloc from C++, "can't allocate memory" from its CPU allocator), or a GPU's
# own limit.
_ALLOCATION_FAILED = re.compile(r"std::bad_alloc|can't allocate memory|Cannot allocate memory|out of memory",
                                re.IGNORECASE)
_REQUESTED = re.compile(r"tried to allocate (\d+) bytes")

# The cap of this process in MB, when it runs in a kernel that nbgrader started with one
# (gptcourse/checking/kernel_memory.py sets it); None elsewhere.
_kernel_cap_mb = None


def memory_exhausted(error):
    """Whether an exception the code raised ({"type": ..., "message": ...}) was an allocation that failed."""
    return error.get("type") in ("MemoryError", "OutOfMemoryError") or bool(
        _ALLOCATION_FAILED.search(str(error.get("message", ""))))


def allocation_failed(exc):
    """memory_exhausted for an exception object."""
    return memory_exhausted({"type": type(exc).__name__, "message": str(exc)})


def requested_bytes(error):
    """The size of the one allocation that failed, when the message says it (torch's CPU allocator)."""
    found = _REQUESTED.search(str(error.get("message", "")))
    return int(found.group(1)) if found else None


def memory_message(limit_mb, where, requested=None):
    """(message, detail) for code that ran out of memory. limit_mb: the cap in MB (None: unknown);
    `where`: an outcome with line and step, or an error record (its "where" is "line 19: <code>",
    its "step" what the probe was doing); requested: the bytes of the one allocation that failed."""
    line = where.get("line")
    if line is None and isinstance(where.get("where"), str):
        found = re.match(r"line (\d+)", where["where"])
        line = int(found.group(1)) if found else None
    at = where_text(line, where.get("step"))
    limit = f"the {limit_mb:,} MB memory limit" if limit_mb else "the memory available"
    if requested and (not limit_mb or requested > limit_mb * 1024 * 1024):
        return (f"your code tried to allocate {requested / 2**30:,.1f} GB at once, more than {limit}{at} — "
                f"check the sizes of the tensors you create", "tried to allocate more than the memory limit at once")
    if "GPU" in str(where.get("message", "")) or "CUDA out of memory" in str(where.get("message", "")):
        return (f"your code ran out of GPU memory{at} — a loop that never ends, or one that keeps tensors that "
                f"require grad?", "ran out of GPU memory")
    return (f"your code used more than {limit} and was stopped{at} — a loop that never ends, or one that keeps "
            f"tensors that require grad (keep loss.item(), not loss)?", "used more than the memory limit")


def where_text(line, step):
    """' at line 3 of your solution cell, while calling f(x)', or what of it is known."""
    text = f" at line {line} of your solution cell" if isinstance(line, int) else ""
    if isinstance(step, str) and step:
        text += f"{',' if text else ''} while {step}"
    return text


def kernel_cap_mb():
    """The memory cap of this kernel in MB (None when it has none): for the messages above."""
    return _kernel_cap_mb


def record_kernel_cap(memory_mb):
    global _kernel_cap_mb
    _kernel_cap_mb = memory_mb
