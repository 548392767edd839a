"""Where a child's code was when its time ran out, for the message that says so.

The host sends WHERE_SIGNAL to a child that ran past its time limit (ask_where); the child,
which set up its answer before running the job (answer_where_on_signal), writes WHERE_MARK and
where it is to its pipe, then exits. A child that does not answer within WHERE_GRACE seconds
(stuck in one long C call, or code that replaced the handler) is killed without it.

where_stopped reads a stack for the student's line and the probe's step; the self-check (on an
interrupt) and nbgrader's kernels (on their time limit) read their own stacks with it.
"""
import json
import os
import select
import signal
import time

from gptcourse.checking.worker_host.frames import read_available
from gptcourse.checking.worker_host.processes import exit_status

WHERE_SIGNAL = signal.SIGUSR1
WHERE_GRACE = 1.0
WHERE_MARK = b"\x00where:"  # precedes the child's answer to WHERE_SIGNAL in its pipe


# ------------------------------------------------------------------------------------------
# The host asks
# ------------------------------------------------------------------------------------------

def ask_where(pid, reader):
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
        read_available(reader, received, 1 << 16)
        if exit_status(pid) is not None:
            read_available(reader, received, 1 << 16)
            break
    return _answer_in(b"".join(received))


def _answer_in(text):
    """The child's answer after the last WHERE_MARK in what its pipe held; {} when there is none
    or it is not a JSON object."""
    start = text.rfind(WHERE_MARK)
    if start < 0:
        return {}
    try:
        where = json.loads(text[start + len(WHERE_MARK):].decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return where if isinstance(where, dict) else {}


# ------------------------------------------------------------------------------------------
# The child answers
# ------------------------------------------------------------------------------------------

def answer_where_on_signal(writer, student_filename):
    """On WHERE_SIGNAL, write where the student's code is (the innermost line of their cell on the
    stack, and the probe's step) and exit: the host asks when the task's time is up, so that the
    feedback can say where the code was stopped."""
    def answer(signum, frame):
        where = where_stopped(frame, student_filename)
        try:
            os.write(writer, WHERE_MARK + json.dumps(where).encode("utf-8"))
        finally:
            os._exit(0)

    signal.signal(WHERE_SIGNAL, answer)


# ------------------------------------------------------------------------------------------
# Reading a stack
# ------------------------------------------------------------------------------------------

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
