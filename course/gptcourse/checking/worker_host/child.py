"""The forked child of one job: cut off from the host's channel, in its own scratch folder and
process group, its output captured; it runs the job and writes one message to its pipe."""
import io
import os
import sys
import tempfile

from gptcourse.checking.worker_host.job import run_job
from gptcourse.checking.worker_host.where import answer_where_on_signal


def run_child(job, writer, scratch, private_fds):
    """The child's whole life: never returns."""
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
        answer_where_on_signal(writer, job.get("student_filename"))
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
