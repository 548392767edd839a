"""The grader's side of the worker hosts: a pool of hosts, and what it accepts from them.

Each host (the package gptcourse/checking/worker_host/) runs one job at a time; the pool keeps `jobs` hosts
busy, restarts a host that dies (student code may kill it), and turns every reply into an
*outcome* for the verdict:

    {"result": <worker message>}                  the code ran and reported
    {"killed": "timeout" | "memory", "limit": x,  stopped at a limit (and where the code was,
     "line": n, "step": "..."}                    when the child said)
    {"died": <exit status>}                       the process ended without reporting
    {"malformed": "<why>"}                        it reported something that is not a worker message

Nothing a host sends is trusted: frames are size-capped, decoded defensively, and checked
against the worker-message schema before the verdict sees them; anything else becomes that
task's `error`, never an exception in this process.
"""
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

import numpy as np

from gptcourse.checking import records
from gptcourse.checking.worker_host import frames
from grader.grading import sandbox

MAX_MESSAGE_BYTES = 32 << 20  # what one task's observations may take, as JSON text
MAX_DEPTH = 12  # nesting of dicts and lists in a worker message
MAX_STRING = 20_000  # characters of one string
MAX_ITEMS = 100_000  # entries of one list or dict
START_TIMEOUT = 120.0  # seconds for a new host to import torch and say it is ready
GRACE = 15.0  # seconds beyond the task's own limit before the pool kills an unresponsive host
STDERR_TAIL = 4000  # bytes of a host's stderr kept for the error when it dies


class MalformedMessage(ValueError):
    """A worker message that does not follow the schema."""


# ------------------------------------------------------------------------------------------
# The schema of a worker message
# ------------------------------------------------------------------------------------------

ERROR_FIELDS = {"type": str, "message": str, "step": str, "where": str, "ours": bool}


def parse_worker_message(text):
    """The worker message in `text`, checked; raises MalformedMessage saying what is wrong."""
    if not isinstance(text, str):
        raise MalformedMessage("the message is not text")
    if len(text) > MAX_MESSAGE_BYTES:
        raise MalformedMessage(f"the message is larger than {MAX_MESSAGE_BYTES} bytes")
    try:
        message = records.loads(text)
    except Exception as exc:  # noqa: BLE001 - json and the array decoder raise many kinds
        raise MalformedMessage(f"the message is not valid JSON of plain values ({type(exc).__name__})") from None
    _check_plain(message, "message", 0)
    if not isinstance(message, dict):
        raise MalformedMessage("the message is not a JSON object")
    _expect(message, "fatal", (str, type(None)))
    _expect(message, "warnings", list, required=False)
    _expect(message, "output_tail", str, required=False)
    if not all(isinstance(w, str) for w in message.get("warnings") or []):
        raise MalformedMessage("'warnings' holds something other than strings")
    if message.get("fatal") is None:
        _expect(message, "observations", list)
        for index, observation in enumerate(message["observations"]):
            if not isinstance(observation, dict):
                raise MalformedMessage(f"observation {index} is not an object")
            if "error" in observation:
                _check_error(observation["error"], index)
    unknown = set(message) - {"fatal", "warnings", "output_tail", "observations"}
    if unknown:
        raise MalformedMessage(f"unexpected fields {sorted(unknown)[:5]}")
    return message


def _expect(message, key, types, required=True):
    if key not in message:
        if required:
            raise MalformedMessage(f"the field {key!r} is missing")
        return
    if not isinstance(message[key], types) or isinstance(message[key], bool) and bool not in _as_tuple(types):
        raise MalformedMessage(f"the field {key!r} has the wrong type ({type(message[key]).__name__})")


def _as_tuple(types):
    return types if isinstance(types, tuple) else (types,)


def _check_error(error, index):
    if not isinstance(error, dict) or set(error) != set(ERROR_FIELDS):
        raise MalformedMessage(f"the error of observation {index} is not an error record")
    for key, kind in ERROR_FIELDS.items():
        if not isinstance(error[key], kind):
            raise MalformedMessage(f"the error of observation {index} has a {key!r} of the wrong type")


def _check_plain(value, where, depth):
    """Only JSON values and numeric arrays, nested at most MAX_DEPTH deep."""
    if depth > MAX_DEPTH:
        raise MalformedMessage(f"{where} is nested too deeply")
    if value is None or isinstance(value, (bool, int, float)):
        return
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise MalformedMessage(f"{where} holds a string of {len(value)} characters")
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise MalformedMessage(f"{where} holds an array of dtype {value.dtype}")
        return
    if isinstance(value, list):
        if len(value) > MAX_ITEMS:
            raise MalformedMessage(f"{where} holds a list of {len(value)} items")
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise MalformedMessage(f"{where} holds an object of {len(value)} entries")
        for key, item in value.items():
            if not isinstance(key, str):
                raise MalformedMessage(f"{where} has a key that is not a string")
            _check_plain(item, f"{where}[{key[:40]!r}]", depth + 1)
        return
    raise MalformedMessage(f"{where} holds a {type(value).__name__}")


def outcome_of(reply, scrub=None):
    """The verdict's outcome for a host's reply frame (already JSON-decoded, untrusted)."""
    outcome = reply.get("outcome") if isinstance(reply, dict) else None
    if not isinstance(outcome, dict) or len(outcome) == 0:
        return {"malformed": "the worker host sent a reply without an outcome"}
    if "message" in outcome:
        try:
            message = parse_worker_message(outcome["message"])
        except MalformedMessage as exc:
            return {"malformed": str(exc)}
        result = {"result": scrub(message) if scrub else message}
        ended = reply.get("ended_processes")
        if isinstance(ended, int) and not isinstance(ended, bool) and 0 < ended < 10**6:
            result["ended_processes"] = ended
        return result
    if outcome.get("killed") in ("timeout", "memory") and isinstance(outcome.get("limit"), (int, float)):
        return {"killed": outcome["killed"], "limit": outcome["limit"], **_where(outcome, scrub)}
    if "oversized" in outcome:
        return {"malformed": f"the report was larger than {MAX_MESSAGE_BYTES} bytes"}
    if "died" in outcome and isinstance(outcome["died"], (int, str)):
        return {"died": str(outcome["died"])[:80]}
    return {"malformed": "the worker host sent an outcome of an unknown kind"}


def _where(outcome, scrub=None):
    """Where the code of a task stopped at its limit was, as its child said (untrusted: only a
    line number and a short step that passes the scrubber are kept)."""
    where = {}
    line = outcome.get("line")
    if isinstance(line, int) and not isinstance(line, bool) and 0 < line < 10**7:
        where["line"] = line
    step = outcome.get("step")
    if isinstance(step, str) and 0 < len(step) <= 200:
        if scrub:
            step = scrub({"fatal": step, "warnings": []}).get("fatal") or ""
        if step:
            where["step"] = step
    return where


# ------------------------------------------------------------------------------------------
# Hosts
# ------------------------------------------------------------------------------------------

class Host:
    """One worker host process and the thread that reads its replies into the pool's queue."""

    def __init__(self, isolation, replies):
        command, env = sandbox.host_command(isolation)
        # stderr is kept (its tail): a host that cannot start (an import error, say) must say why.
        # Graded code never writes there: each child points its fds 1 and 2 at /dev/null.
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, start_new_session=True,
                                        cwd="/" if isolation.sandbox == "bwrap" else tempfile.gettempdir())
        self.ready = False
        self.item = self.job = None  # the job being run
        self.sent_at = None  # when it was sent (the pool's clock: a host's own timing is not trusted)
        self.deadline = time.monotonic() + START_TIMEOUT
        self.replies = replies
        self._stderr = bytearray()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        threading.Thread(target=self._read_replies, daemon=True).start()

    def _read_stderr(self):
        """Keep the last STDERR_TAIL bytes the host writes to stderr (reading all of it, so that
        the host never blocks on a full pipe)."""
        fd = self.process.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self._stderr += chunk
            del self._stderr[:-STDERR_TAIL]

    def stderr_tail(self):
        """The end of what the host wrote to stderr, as text (after stop(), all of it)."""
        return bytes(self._stderr).decode("utf-8", "replace").strip()

    def _read_replies(self):
        fd = self.process.stdout.fileno()
        while True:
            try:
                frame = frames.read_frame(fd, MAX_MESSAGE_BYTES + (1 << 20))
                reply = json.loads(frame)
                if not isinstance(reply, dict):
                    reply = {"outcome": None}
            except (frames.ChannelClosed, OSError, ValueError, RecursionError) as exc:
                self.replies.put((self, {"closed": str(exc)}))
                return
            self.replies.put((self, reply))

    def send(self, item, request, timeout):
        self.item, self.job = item, request["job"]
        self.sent_at = time.monotonic()
        self.deadline = self.sent_at + timeout + GRACE
        try:
            frames.write_frame(self.process.stdin.fileno(), records.dumps(request).encode())
        except OSError:
            pass  # the host is gone: its reader thread reports that

    def stop(self):
        for action in (lambda: os.killpg(self.process.pid, signal.SIGKILL), self.process.kill):
            try:
                action()
            except (ProcessLookupError, PermissionError, OSError):
                pass
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(1.0)  # the pipe ends with the host: read what it wrote last
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except OSError:
                pass


def prepare_tokenizer_files():
    """Put tiktoken's GPT-2 files in place here, where the cache is writable, and set
    TIKTOKEN_CACHE_DIR, which the sandbox passes on (read-only): student code that calls
    tiktoken.get_encoding("gpt2") then works in a worker without internet. When the files
    cannot be had, nothing is said here: the grade's preflight stops the run if a graded chapter
    needs them (grader/grading/preflight.py), and a run that does not need them goes on."""
    from gptcourse.tokenizer import load_if_available

    load_if_available()


# Who else is shown each host's reply to a job: callables observer(job, reply), called as the reply
# comes in (untrusted and not yet checked; a dict when the host is sound), before its outcome is
# made. For measuring only: grading adds none, and an observer must neither raise nor change what
# it is given. benchmarks/classbench/profiling.py adds one to keep each task's time in its host
# (the reply's `seconds`, fork to reaping), which the outcome does not carry (its `seconds` is the
# pool's, from sending the job to the reply).
reply_observers = []


def _timed(outcome, host):
    """The outcome with `seconds`: how long its job took, from sending it to the reply (or to the
    host's end), as the pool measured it. This is the task's own time, whatever ran before it."""
    return dict(outcome, seconds=round(time.monotonic() - host.sent_at, 3))


class WorkerPool:
    """`jobs` worker hosts; `run(items)` yields (item, outcome) as jobs finish.

    raw: yield each host's reply as it came, unchecked, instead of its outcome ({"outcome": ...,
    "ended_processes": n, "seconds": s}, the seconds measured here): a Dask worker runs its jobs
    in such a pool and sends the replies to the grading process, which checks them there with
    outcome_of, as it checks its own hosts' (grader/cluster/pool.py)."""

    def __init__(self, isolation, jobs, scrub=None, raw=False):
        self.isolation = isolation
        self.size = max(1, int(jobs))
        self.scrub = scrub
        self.raw = raw
        self.replies = queue.Queue()
        prepare_tokenizer_files()
        self.hosts = [Host(isolation, self.replies) for _ in range(self.size)]
        self.failed_starts = 0

    def run(self, items, timeout, memory_mb):
        """items: (item, job) pairs. Yields (item, outcome) in the order jobs finish."""
        waiting = deque(items)
        busy = 0
        request = {"timeout": timeout, "memory_mb": memory_mb, "max_message_bytes": MAX_MESSAGE_BYTES}
        while waiting or busy:
            for host in self.hosts:
                if host.ready and host.item is None and waiting:
                    item, job = waiting.popleft()
                    host.send(item, dict(request, job=job), timeout)
                    busy += 1
            try:
                host, reply = self.replies.get(timeout=0.1)
            except queue.Empty:
                host, reply = None, None
            if host is not None and host in self.hosts:
                finished = self._handle(host, reply)
                if finished is not None:
                    busy -= 1
                    yield finished
            for overdue in [h for h in self.hosts if time.monotonic() > h.deadline and (h.item or not h.ready)]:
                finished = self._replace(overdue, {"killed": "timeout", "limit": timeout})
                if finished is not None:
                    busy -= 1
                    yield finished

    def _handle(self, host, reply):
        if "closed" in reply:
            return self._replace(host, {"died": "its worker host was ended"})
        if not host.ready:
            host.ready = bool(reply.get("ready")) if isinstance(reply, dict) else False
            if not host.ready:
                return self._replace(host, None)
            self.failed_starts = 0
            host.deadline = float("inf")
            return None
        if host.item is None:
            return None  # a reply nobody asked for: ignore it
        item, job, host.item = host.item, host.job, None
        host.deadline = float("inf")
        for observer in reply_observers:
            observer(job, reply)
        if self.raw:
            return item, _timed({key: reply[key] for key in ("outcome", "ended_processes") if key in reply}, host)
        scrub = (lambda message: self.scrub(message, job)) if self.scrub else None
        return item, _timed(outcome_of(reply, scrub), host)

    def _replace(self, host, outcome):
        """Stop `host` (and everything it left), start a fresh one; the job it ran gets `outcome`."""
        item = host.item
        if not host.ready:
            self.failed_starts += 1
            if self.failed_starts >= 2 * self.size:
                host.stop()
                said = host.stderr_tail()
                self.close()
                raise SystemExit("the grader's worker processes could not start (tried "
                                 f"{self.failed_starts} times; sandbox: {self.isolation.sandbox}). "
                                 "Try --sandbox none, or check that `python -m gptcourse.checking.worker_host` runs."
                                 + (f"\nThe last one's error output ended with:\n{said[-STDERR_TAIL:]}"
                                    if said else "\nThe last one wrote nothing to its error output."))
        host.stop()
        said = host.stderr_tail()
        if said and (not host.ready or "died" in (outcome or {})):
            # The grader's own log: never a student's feedback (a worker may write anything there).
            print(f"note: a grader worker process ended; its error output ended with:\n"
                  f"{said[-1000:]}", file=sys.stderr)
        self.end_strays()
        self.hosts[self.hosts.index(host)] = Host(self.isolation, self.replies)
        if item is None:
            return None
        outcome = outcome or {"died": "the worker process ended"}
        return item, _timed({"outcome": outcome} if self.raw else outcome, host)

    def end_strays(self):
        """End processes that escaped a host (possible only when a host itself was killed)."""
        return sandbox.end_stray_processes(keep=[h.process.pid for h in self.hosts if h.process.poll() is None])

    def close(self):
        """Stop every host and end whatever is left; safe to call more than once."""
        for host in self.hosts:
            host.stop()
        self.end_strays()
