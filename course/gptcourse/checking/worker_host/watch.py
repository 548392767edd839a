"""The host watching one child: its limits while it runs, and what became of it.

The task ends when the child exits, not when its pipe closes: a process the child left behind
may hold the pipe open, and must not keep its task (and its forgeries) alive.
"""
import os
import select
import time

from gptcourse.checking.worker_host.frames import read_available
from gptcourse.checking.worker_host.processes import exit_status, rss_mb
from gptcourse.checking.worker_host.where import ask_where

# A backstop to the child's own cap (memory_limit.py), which counts what the child allocates on
# top of what it started with (torch and the host's preloads are resident already): the host
# stops a child whose resident memory passes the limit by more than this.
RSS_MARGIN_MB = 1024


def watch(pid, reader, request, started):
    """Read the child's message while enforcing its limits; return the outcome: {"message": ...},
    or {"killed": "timeout" | "memory", "limit": ...}, {"oversized": ...}, {"died": ...}."""
    limit_bytes = int(request.get("max_message_bytes", 32 << 20))
    timeout = float(request["timeout"])
    memory_mb = float(request["memory_mb"])
    os.set_blocking(reader, False)
    received, size, status, outcome = [], 0, None, None
    while outcome is None:
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            outcome = dict({"killed": "timeout", "limit": timeout}, **ask_where(pid, reader))
        elif rss_mb(pid) > memory_mb + RSS_MARGIN_MB:
            outcome = {"killed": "memory", "limit": memory_mb}
        else:
            select.select([reader], [], [], min(0.05, remaining))
            size += read_available(reader, received, limit_bytes - size + 1)
            if size > limit_bytes:
                outcome = {"oversized": limit_bytes}
            elif status is not None:
                break  # exited, and everything it wrote has been read
            else:
                status = exit_status(pid)
    os.close(reader)
    if outcome is None:
        if size == 0 or not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            outcome = {"died": _exit_description(status)}
        else:
            outcome = {"message": b"".join(received).decode("utf-8", "replace")}
    return outcome


def _exit_description(status):
    if status is None:
        return "unknown"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return os.WEXITSTATUS(status)
