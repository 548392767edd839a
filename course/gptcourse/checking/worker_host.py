"""The grading worker host: where graded student code runs, one task at a time.

The grader (`python -m grader grade`) starts one host per parallel job, inside a bubblewrap
sandbox when it can (see grader/grading/sandbox.py), and talks to it over the host's stdin and stdout
in length-prefixed frames. The host imports torch once; for each job it forks a child that
runs the course setup, the earlier tasks' reference code and the student's cell, probes the
cases and writes plain observations to a pipe. The host then:

- stops the child when it runs past its time or memory limit;
- ends every process the child left behind (the host is a "child subreaper": orphans of its
  descendants become its own children, so a double fork or setsid cannot escape it);
- empties the child's private scratch folder;
- only then answers the grader, with the child's message as raw bytes, size-capped.

Nothing here decides a grade, and the grader trusts nothing the host sends: it checks every
message against a schema (grader/grading/pool.py). This module lives in the public package because
the sandbox holds no grader code at all: the hidden cases, the reference of the task being
graded and the expected outputs never enter it.
"""
import ast
import ctypes
import importlib.machinery
import io
import json
import linecache
import os
import re
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback

_HEADER = struct.Struct(">Q")
_MAGIC_LINE = re.compile(r"^(\s*)[%!].*$", re.MULTILINE)
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
# Sent to a child that ran past its time limit: it answers with where its code was, then exits.
# A child that does not answer within WHERE_GRACE seconds (stuck in one long C call, or code that
# replaced the handler) is killed without it.
WHERE_SIGNAL = signal.SIGUSR1
WHERE_GRACE = 1.0


# ------------------------------------------------------------------------------------------
# Frames: an 8-byte big-endian length, then that many bytes of JSON.
# ------------------------------------------------------------------------------------------

class ChannelClosed(Exception):
    """The other end closed the channel (or sent a frame larger than allowed)."""


def write_frame(fd, payload: bytes):
    data = _HEADER.pack(len(payload)) + payload
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exactly(fd, size):
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed("end of stream")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd, max_bytes):
    (size,) = _HEADER.unpack(read_exactly(fd, _HEADER.size))
    if size > max_bytes:
        raise ChannelClosed(f"a frame of {size} bytes is larger than the limit of {max_bytes}")
    return read_exactly(fd, size)


# ------------------------------------------------------------------------------------------
# Processes: hardening, descendants, reaping (Linux; elsewhere these do what they can).
# ------------------------------------------------------------------------------------------

def prctl(option, value):
    """Call prctl(2); False where it is not available (macOS) or refused."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_reaper():
    """Make orphaned descendants our children, and our memory and /proc files unreadable to
    processes of the same user (a non-dumpable process cannot be ptraced or have its fds,
    memory or environment read through /proc without CAP_SYS_PTRACE)."""
    reaper = prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)
    return reaper


def _process_table():
    """{pid: (ppid, state)} of every process this /proc shows."""
    table = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2:
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def descendants(root, table=None):
    """Living (not zombie) descendants of `root`, deepest last."""
    table = _process_table() if table is None else table
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return [pid for pid in found if table[pid][1] != "Z"]


def collect_zombies():
    """Reap exited children (ours, and orphans handed to us as subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_descendants(root=None, keep=(), rounds=200):
    """SIGKILL every descendant of `root` (default: this process) except `keep` and theirs.

    Repeats until none is left, since a process may fork while we kill; returns how many
    processes were ended. Stopping first (SIGSTOP) keeps a fork loop from outrunning us.
    """
    root = os.getpid() if root is None else root
    ended = set()
    for _ in range(rounds):
        table = _process_table()
        spared = set(keep)
        for pid in keep:
            spared.update(descendants(pid, table))
        victims = [pid for pid in descendants(root, table) if pid not in spared]
        if not victims:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        ended.update(victims)
        collect_zombies()
        time.sleep(0.005)
    collect_zombies()
    return len(ended)


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


class _HiddenPackageBlocker:
    """A meta-path finder that refuses the hidden packages (the grader's own)."""

    def __init__(self, names):
        self.names = tuple(names)

    def find_spec(self, name, path=None, target=None):
        if any(name == hidden or name.startswith(hidden + ".") for hidden in self.names):
            raise ImportError(f"the package {name.split('.')[0]!r} is not available to graded code")
        return None


def hide_packages(names):
    """Make the grader's packages unimportable here: drop the path entries and the (editable
    install) finders that lead to them, and refuse them by name.

    In the sandbox their files are not there at all; without it this only stops accidental
    imports (a copied instructor cell), since student code could undo it: see docs/grading.md.
    """
    names = [n for n in names if n]
    for name in [m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in names)]:
        del sys.modules[name]
    for name in names:
        for finder in list(sys.meta_path):
            if finder is importlib.machinery.PathFinder:
                continue  # the ordinary path search: handled through sys.path below
            try:
                found = finder.find_spec(name, None) is not None
            except Exception:  # noqa: BLE001 - the blocker below refuses the name anyway
                found = False
            if found:
                sys.meta_path.remove(finder)
        sys.path[:] = [entry for entry in sys.path
                       if not os.path.isdir(os.path.join(entry or ".", name))]
    sys.meta_path.insert(0, _HiddenPackageBlocker(names))


# ------------------------------------------------------------------------------------------
# The host loop
# ------------------------------------------------------------------------------------------

def main():
    # The channel to the grader: keep private copies of stdin/stdout and point fds 0 and 1
    # at /dev/null, so nothing printed by a library (or a child) can corrupt a frame.
    channel_in, channel_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    reaper = become_reaper()

    import numpy  # noqa: F401  - imported once here; every child starts with them loaded
    import torch  # noqa: F401

    from gptcourse import tokenizer
    from gptcourse.checking import probes, records  # noqa: F401

    probes.load_meta_kernels()  # once here rather than in every forked child
    _warm_up()
    check_no_gpu_initialised()
    # tiktoken keeps the encoding: every child's tiktoken.get_encoding("gpt2") then costs nothing.
    tokenizer.load_if_available()

    hide_packages(os.environ.get("GPTCOURSE_HIDDEN_PACKAGES", "grader").split(","))
    scratch_root = os.environ.get("GPTCOURSE_SCRATCH") or tempfile.gettempdir()
    write_frame(channel_out, json.dumps({"ready": True, "reaper": reaper}).encode())
    while True:
        try:
            request = records.loads(read_frame(channel_in, max_bytes=1 << 30).decode("utf-8"))
        except ChannelClosed:
            return 0
        reply = run_request(request, scratch_root, (channel_in, channel_out))
        write_frame(channel_out, json.dumps(reply).encode())


def _warm_up():
    """Run a little attention-like work on the CPU and on meta once, so that PyTorch's lazy
    first-use set-up happens here and every forked child starts with it done.

    Nothing here may touch a GPU: a CUDA driver initialised before fork() is unusable in the
    children ("CUDA error: initialization error" on every CUDA task). The backward pass is the
    trap: autograd's first backward counts the devices of every GPU backend torch was built with
    (for CUDA that initialises the driver) and starts a thread per device, after which a forked
    child cannot run backward at all. So it is warmed up only where torch has no GPU backend (the
    CPU builds of the course machines); elsewhere each child's first backward does that set-up.
    """
    import torch

    backward = not gpu_backend_built()
    for device in ("cpu", "meta"):
        layer = torch.nn.Linear(4, 4).to(device)
        x = torch.ones(2, 3, 4, device=device, requires_grad=backward and device == "cpu")
        scores = layer(x) @ x.transpose(-2, -1)
        future = torch.triu(torch.ones(3, 3, dtype=torch.bool, device=device), diagonal=1)
        weights = torch.dropout(torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1), 0.1, True)
        out = torch.cat([weights @ x, x], dim=-1).view(2, 3, 2, 4).transpose(1, 2).reshape(2, 3, 8)
        if backward and device == "cpu":
            out.sum().backward()


def gpu_backend_built():
    """Whether this torch was built with a GPU backend (CUDA or ROCm, MPS, XPU), whether or not a
    GPU is present: asking whether one is present could itself initialise the driver."""
    import torch

    checks = (lambda: torch.backends.cuda.is_built(), lambda: torch.backends.mps.is_built(),
              lambda: torch.xpu._is_compiled())
    for check in checks:
        try:
            if check():
                return True
        except Exception:  # noqa: BLE001 - an older torch without that backend's module
            pass
    return False


def check_no_gpu_initialised():
    """Raise when CUDA was initialised in this process: the children forked from it could not use it."""
    import torch

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised in the worker host before it forks its children, which "
                           "then fail on every CUDA task (CUDA error: initialization error); nothing "
                           "the host runs before fork() may touch the GPU")


def run_request(request, scratch_root, private_fds):
    """Run one job in a child process; return the reply frame for the grader."""
    preload_for(request["job"])
    scratch = tempfile.mkdtemp(prefix="task-", dir=scratch_root)
    reader, writer = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(reader)
        _child(request["job"], writer, scratch, private_fds)
    os.close(writer)
    outcome = _watch(pid, reader, request, started)
    ended = end_descendants()
    shutil.rmtree(scratch, ignore_errors=True)
    return {"outcome": outcome, "ended_processes": ended, "seconds": round(time.monotonic() - started, 3)}


# ------------------------------------------------------------------------------------------
# Loading once in the host what every child would load again
# ------------------------------------------------------------------------------------------

_PRELOADED = set()  # the (task, setup cells) of the jobs this host has preloaded for


def preload_for(job):
    """Import in the host, before it forks the job's child, the modules that child would import
    anyway: those the course's setup cells import (pandas in chapters 07 and 08 costs about a
    second a job), the student package's names they take (`from gptcourse import check`), and
    the checking module of the task's chapter (the probes and the judge need it). Each is
    imported once per host and is then in every later child, already compiled.

    Only the grader's own setup cells and task id are read here, never the student's cell. A
    module that fails to import is left alone: the child imports it again and reports it as it
    always has.

    Only where torch has no GPU backend (the CPU builds): elsewhere an import that asks torch
    about the GPU could set up the CUDA driver in the host, and no child forked afterwards
    could use it (see _warm_up). There each child imports what it needs, as before."""
    if gpu_backend_built():
        return
    seen = (job.get("task"), tuple(job.get("setup_sources", ())))
    if seen in _PRELOADED:  # most jobs: nothing to parse or import again
        return
    _PRELOADED.add(seen)
    for module, names in _modules_to_preload(job):
        try:
            imported = importlib.import_module(module)
            for name in names:
                getattr(imported, name, None)  # gptcourse loads its names on first use
        except Exception:  # noqa: BLE001 - the child meets the same error and reports it
            continue
        check_no_gpu_initialised()  # a CPU build cannot, but say so loudly if it ever did


def _modules_to_preload(job):
    """[(module, names taken from it)] for a job: its setup cells' imports, then its chapter's
    checking module."""
    wanted = []
    for source in job.get("setup_sources", []):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:  # top-level imports only: what a setup cell always runs
            if isinstance(node, ast.Import):
                wanted += [(alias.name, ()) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                wanted.append((node.module, tuple(alias.name for alias in node.names)))
    from gptcourse.checking.tasks import get_task

    try:
        wanted.append((f"gptcourse.checking.chapters.ch{get_task(job['task']).chapter}", ()))
    except (KeyError, TypeError):
        pass  # an unknown task: the child says so
    return wanted


def _watch(pid, reader, request, started):
    """Read the child's message while enforcing its limits; return the outcome.

    The task ends when the child exits, not when its pipe closes: a process the child left
    behind may hold the pipe open, and must not keep its task (and its forgeries) alive.
    """
    limit_bytes = int(request.get("max_message_bytes", 32 << 20))
    timeout = float(request["timeout"])
    memory_mb = float(request["memory_mb"])
    os.set_blocking(reader, False)
    received, size, status, outcome = [], 0, None, None
    while outcome is None:
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            outcome = dict({"killed": "timeout", "limit": timeout}, **_ask_where(pid, reader))
        elif rss_mb(pid) > memory_mb + 1024:
            outcome = {"killed": "memory", "limit": memory_mb}
        else:
            select.select([reader], [], [], min(0.05, remaining))
            size += _drain(reader, received, limit_bytes - size + 1)
            if size > limit_bytes:
                outcome = {"oversized": limit_bytes}
            elif status is not None:
                break  # exited, and everything it wrote has been read
            else:
                status = _exited(pid)
    os.close(reader)
    if outcome is None:
        if size == 0 or not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            outcome = {"died": _exit_description(status)}
        else:
            outcome = {"message": b"".join(received).decode("utf-8", "replace")}
    return outcome


def _ask_where(pid, reader):
    """{"line": n, "step": "..."} of the code a child was running when its time ran out, as the
    child itself reports it on WHERE_SIGNAL ({} when it does not answer in time). Whatever the
    child wrote before is discarded: a task stopped at its limit has no result."""
    try:
        os.kill(pid, WHERE_SIGNAL)
    except ProcessLookupError:
        return {}
    deadline = time.monotonic() + WHERE_GRACE
    received = []
    while time.monotonic() < deadline:
        select.select([reader], [], [], 0.02)
        _drain(reader, received, 1 << 16)
        if _exited(pid) is not None:
            _drain(reader, received, 1 << 16)
            break
    text = b"".join(received)
    start = text.rfind(_WHERE_MARK)
    if start < 0:
        return {}
    try:
        where = json.loads(text[start + len(_WHERE_MARK):].decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return where if isinstance(where, dict) else {}


def _drain(reader, received, room):
    """Read what the pipe holds now (at most `room` bytes more); return how many bytes."""
    got = 0
    while got < room:
        try:
            chunk = os.read(reader, min(1 << 20, room - got))
        except BlockingIOError:
            break
        if not chunk:
            break
        received.append(chunk)
        got += len(chunk)
    return got


def _exited(pid):
    """The child's wait status once it has exited, else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done else None


def _exit_description(status):
    if status is None:
        return "unknown"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return os.WEXITSTATUS(status)


# ------------------------------------------------------------------------------------------
# The child: runs the job and writes one message
# ------------------------------------------------------------------------------------------

def _child(job, writer, scratch, private_fds):
    try:
        for fd in private_fds:
            os.close(fd)
        _close_other_fds(keep=(0, 1, 2, writer))
        os.setpgrp()
        os.chdir(scratch)
        os.environ["HOME"] = scratch
        os.environ["TMPDIR"] = scratch
        tempfile.tempdir = scratch
        output = _silence_output()
        _answer_where_on_signal(writer, job.get("student_filename"))
        try:
            result = run_job(job, scratch)
        except BaseException as exc:  # noqa: BLE001 - any failure must still be reported
            result = {"fatal": f"the grader's worker failed: {type(exc).__name__}: {exc}", "warnings": []}
        result["output_tail"] = _tail(output)
        from gptcourse.checking import records

        payload = records.dumps(result).encode("utf-8", "replace")
        view = memoryview(payload)
        while view:
            view = view[os.write(writer, view):]
    finally:
        os._exit(0)  # skip interpreter teardown: student objects may misbehave in __del__


_WHERE_MARK = b"\x00where:"  # precedes the child's answer to WHERE_SIGNAL in its pipe


def _answer_where_on_signal(writer, student_filename):
    """On WHERE_SIGNAL, write where the student's code is (the innermost line of their cell on the
    stack, and the probe's step) and exit: the host asks when the task's time is up, so that the
    feedback can say where the code was stopped."""
    def answer(signum, frame):
        where = where_stopped(frame, student_filename)
        try:
            os.write(writer, _WHERE_MARK + json.dumps(where).encode("utf-8"))
        finally:
            os._exit(0)

    signal.signal(WHERE_SIGNAL, answer)


def code_files(objects):
    """The files the student's functions and methods (static and class methods too) were compiled
    from: in a kernel, the student's cell, whose line numbers where_stopped then reports."""
    files = set()
    for obj in objects:
        functions = vars(obj).values() if isinstance(obj, type) else [obj]
        for function in functions:
            code = getattr(getattr(function, "__func__", function), "__code__", None)
            if code is not None:
                files.add(code.co_filename)
    return files


def where_stopped(frame, student_files):
    """{"line": the innermost line of the student's cell on the stack, "step": what the probe was
    doing}, each only when found. Line numbers count from the first line of the cell.
    student_files: the cell's file name, or a collection of them."""
    files = {student_files} if isinstance(student_files, str) else set(student_files or ())
    where = {}
    while frame is not None:
        code = frame.f_code
        if "line" not in where and code.co_filename in files:
            where["line"] = frame.f_lineno
        if "step" not in where and code.co_name == "run_probe" and code.co_filename.endswith("probes.py"):
            step = getattr(frame.f_locals.get("probe"), "step", None)
            if isinstance(step, str):
                where["step"] = step[:200]
        frame = frame.f_back
    return where


def _close_other_fds(keep):
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        fds = range(3, 256)
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def run_job(job, scratch=None):
    """Run the course setup, the earlier tasks' reference and the student's cell; probe the cases."""
    import torch

    torch.set_num_threads(job.get("threads", 1))
    if any(str(case.get("device", "cpu")).startswith("cuda") for case in job["cases"]):
        torch.cuda.init()  # before the memory cap: the CUDA runtime maps a lot of memory
    limit_memory(job["memory_limit_mb"])

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    for source in job["setup_sources"] + job["reference_sources"]:
        exec(compile(source, "<course setup>", "exec"), namespace)

    warnings = []
    fatal = _exec_student_cell(job["student_source"], job["student_filename"], namespace, warnings)
    if fatal:
        return {"fatal": fatal, "warnings": warnings}

    missing = [name for name in job["names"] if name not in namespace]
    if missing:
        return {"fatal": f"your solution cell does not define {', '.join(missing)}", "warnings": warnings}
    from gptcourse.checking import probes

    objects = {name: namespace[name] for name in job["names"]}
    # The earlier graded names the task builds on: the reference's, bound by the sources above.
    earlier = {name: namespace[name] for name in job.get("earlier_names", []) if name in namespace}
    observations = probes.observe(objects, job["cases"], scratch=scratch, earlier=earlier)
    return {"fatal": None, "warnings": warnings, "observations": observations}


def _exec_student_cell(source, filename, namespace, warnings):
    """Run the cell statement by statement; a failing demo line must not hide the definitions."""
    source = _MAGIC_LINE.sub(r"\1pass  # IPython magic removed by the grader", source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return f"your solution cell has a syntax error on line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"your solution cell could not be read as Python ({type(exc).__name__}: {exc})"
    for statement in tree.body:
        code = compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec")
        try:
            exec(code, namespace)
        except SystemExit as exc:
            return f"your solution cell called sys.exit({exc.code!r}) (line {statement.lineno})"
        except Exception as exc:  # noqa: BLE001
            last = traceback.extract_tb(exc.__traceback__)[-1]
            warnings.append(
                f"line {statement.lineno} of your solution cell raised {type(exc).__name__}: {exc} "
                f"(the grader skipped that statement; solution cells should only define things)"
                if last.filename == filename else
                f"line {statement.lineno} of your solution cell raised {type(exc).__name__}: {exc} (skipped)"
            )
    return None


def limit_memory(limit_mb):
    """Cap the data segment (heap and anonymous mappings) to what is in use now plus the limit.
    Also the cap of the kernels nbgrader starts (gptcourse/checking/kernel_memory.py)."""
    in_use = _vm_data_bytes()
    soft = in_use + limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _vm_data_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


def _silence_output():
    """Send the student's prints to a buffer instead of anywhere the grader reads."""
    sink = os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 1)
    os.dup2(sink, 2)
    buffer = io.StringIO()
    sys.stdout = buffer
    sys.stderr = buffer
    return buffer


def _tail(buffer, limit=2000):
    try:
        text = buffer.getvalue()
    except Exception:  # noqa: BLE001 - student code may have replaced it
        return ""
    return text[-limit:] if isinstance(text, str) else ""


if __name__ == "__main__":
    sys.exit(main())
