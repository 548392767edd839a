"""The host: its start-up, its loop over the grader's requests, and one request from the fork of
its child to the reply (the package's __init__ tells the whole story)."""
import json
import os
import shutil
import tempfile
import time

from gptcourse.checking.worker_host.child import run_child
from gptcourse.checking.worker_host.frames import ChannelClosed, read_frame, write_frame
from gptcourse.checking.worker_host.gpu import check_no_gpu_initialised
from gptcourse.checking.worker_host.hidden_packages import hide_packages
from gptcourse.checking.worker_host.preload import preload_for, warm_up
from gptcourse.checking.worker_host.processes import become_reaper, end_descendants
from gptcourse.checking.worker_host.watch import watch


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
    from gptcourse.checking import probes, records

    probes.load_meta_kernels()  # once here rather than in every forked child
    warm_up()
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


def run_request(request, scratch_root, private_fds):
    """Run one job in a child process; return the reply frame for the grader."""
    preload_for(request["job"])
    scratch = tempfile.mkdtemp(prefix="task-", dir=scratch_root)
    reader, writer = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(reader)
        run_child(request["job"], writer, scratch, private_fds)
    os.close(writer)
    outcome = watch(pid, reader, request, started)
    ended = end_descendants()
    shutil.rmtree(scratch, ignore_errors=True)
    return {"outcome": outcome, "ended_processes": ended, "seconds": round(time.monotonic() - started, 3)}
