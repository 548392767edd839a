"""The grader's worker hosts: how they start, what they may touch before they fork, and what
the grader says when they cannot start; chapter 05's training cases on a GPU."""
import os
import subprocess
import sys

import pytest
import torch

import gptcourse
from factory import REPO
from gptcourse.checking import worker_host
from gptcourse.checking.worker_host import gpu, preload
from gptcourse.checking.records import dumps
from grader.grading import pool, sandbox
from grader.grading.engine import Expectations

NO_SANDBOX = sandbox.Isolation("none", False, "no sandbox (test)")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


# ------------------------------------------------------------------------------------------
# Starting a host: its import path, and the error output of one that cannot start
# ------------------------------------------------------------------------------------------

def test_a_host_imports_the_course_package_where_it_is_not_installed(tmp_path):
    """Without site-packages (python -S: no editable install either) the host's PYTHONPATH alone
    must lead to the gptcourse the grader uses."""
    _, env = sandbox.host_command(NO_SANDBOX)
    code = "import gptcourse.checking.worker_host as w; print(w.__file__)"
    result = subprocess.run([sys.executable, "-S", "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == os.path.abspath(worker_host.__file__)


def test_the_graders_own_python_path_reaches_the_host_made_absolute(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["course", "", str(REPO)]))
    entries = sandbox.host_command(NO_SANDBOX)[1]["PYTHONPATH"].split(os.pathsep)
    course = os.path.dirname(os.path.dirname(os.path.abspath(gptcourse.__file__)))
    assert entries[0] == course and str(REPO) in entries
    assert all(os.path.isabs(entry) for entry in entries) and len(entries) == len(set(entries))


def test_a_host_that_cannot_start_leaves_its_error_output_in_the_graders_error(monkeypatch):
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('x' * 9000 + '\\nModuleNotFoundError: "
                                     "No module named gptcourse\\n'); sys.exit(1)"]
    monkeypatch.setattr(sandbox, "host_command", lambda isolation: (failing, {"PATH": os.environ.get("PATH", "")}))
    workers = pool.WorkerPool(NO_SANDBOX, 1)
    with pytest.raises(SystemExit) as stopped:
        list(workers.run([("item", {})], timeout=30, memory_mb=100))
    message = str(stopped.value)
    assert "could not start" in message and "ModuleNotFoundError: No module named gptcourse" in message
    assert len(message) < pool.STDERR_TAIL + 1000  # the tail, not all of it
    assert all(host.process.poll() is not None for host in workers.hosts)


def test_a_working_host_reports_ready_and_its_stderr_is_drained():
    workers = pool.WorkerPool(NO_SANDBOX, 1)
    try:
        host = workers.hosts[0]
        reply_host, reply = workers.replies.get(timeout=pool.START_TIMEOUT)
        assert reply_host is host and reply.get("ready") is True
    finally:
        workers.close()
    assert host.process.poll() is not None and isinstance(host.stderr_tail(), str)


# A stand-in host (no torch): says it is ready, then answers every job with an empty worker
# message and its own time, 0.25 s, as worker_host.host.run_request does.
STANDIN_HOST = r"""
import json, os, struct
def read_frame():
    header = os.read(0, 8)
    return os.read(0, struct.unpack(">Q", header)[0]) if len(header) == 8 else None
def write_frame(value):
    data = json.dumps(value).encode()
    os.write(1, struct.pack(">Q", len(data)) + data)
write_frame({"ready": True})
while read_frame() is not None:
    message = json.dumps({"fatal": None, "observations": []})
    write_frame({"outcome": {"message": message}, "ended_processes": 0, "seconds": 0.25})
"""


def test_a_reply_observer_sees_each_job_s_reply_with_the_host_s_own_seconds(monkeypatch):
    """pool.reply_observers: what benchmarks/classbench/profiling.py reads the hosts' times from."""
    monkeypatch.setattr(sandbox, "host_command", lambda isolation: ([sys.executable, "-c", STANDIN_HOST],
                                                                    {"PATH": os.environ.get("PATH", "")}))
    seen = []
    monkeypatch.setattr(pool, "reply_observers", [lambda job, reply: seen.append((job, reply))])
    workers = pool.WorkerPool(NO_SANDBOX, 1)
    try:
        finished = list(workers.run([("first", {"task": "a"}), ("second", {"task": "b"})], timeout=30, memory_mb=100))
    finally:
        workers.close()
    assert [item for item, _ in finished] == ["first", "second"]
    assert all(outcome["result"]["observations"] == [] for _, outcome in finished)
    assert [(job["task"], reply["seconds"]) for job, reply in seen] == [("a", 0.25), ("b", 0.25)]


# ------------------------------------------------------------------------------------------
# Nothing touches a GPU before fork
# ------------------------------------------------------------------------------------------

@pytest.fixture
def backward_calls(monkeypatch):
    """Every backward pass run while the test runs (they still run)."""
    calls, real = [], torch.autograd.backward

    def recording(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "backward", recording)
    return calls


def test_the_warm_up_runs_no_backward_pass_where_torch_has_a_gpu_backend(monkeypatch, backward_calls):
    """Autograd's first backward initialises the CUDA driver (it counts the devices) and starts
    device threads: forked children then fail every CUDA task and every backward pass."""
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    assert gpu.gpu_backend_built()
    preload.warm_up()
    assert backward_calls == []
    assert not torch.cuda.is_initialized()


def test_the_warm_up_keeps_its_backward_pass_on_a_cpu_only_torch(monkeypatch, backward_calls):
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: False)
    monkeypatch.setattr(torch.xpu, "_is_compiled", lambda: False, raising=False)
    assert not gpu.gpu_backend_built()
    preload.warm_up()
    assert len(backward_calls) == 1


def test_a_host_with_cuda_initialised_refuses_to_start(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(RuntimeError, match="initialization error"):
        gpu.check_no_gpu_initialised()
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    gpu.check_no_gpu_initialised()


# ------------------------------------------------------------------------------------------
# What the host loads once for its children
# ------------------------------------------------------------------------------------------

def test_the_host_preloads_a_jobs_setup_imports_and_its_chapters_checking_module():
    job = {"task": "7.1", "student_source": "import antigravity\n",
           "setup_sources": ["import math\nimport torch.nn as nn\nfrom gptcourse import check, get_device\n"
                             "def later():\n    import json\nx = 1\n", "import pandas as pd\n"]}
    assert preload.modules_to_preload(job) == [
        ("math", ()), ("torch.nn", ()), ("gptcourse", ("check", "get_device")), ("pandas", ()),
        ("gptcourse.checking.chapters.ch07_classification", ())]  # never the student's cell, nor nested imports


@pytest.fixture
def fresh_preloads(monkeypatch, tmp_path):
    """A host's preload record of its own, a torch without a GPU backend (the CPU build, where
    the host preloads), and a folder on sys.path for made-up modules."""
    monkeypatch.setattr(preload, "_PRELOADED", set())
    monkeypatch.setattr(gpu, "gpu_backend_built", lambda: False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("preload_ok", "preload_broken"):
        sys.modules.pop(name, None)


def test_a_preloaded_module_is_imported_once_and_a_broken_one_is_left_to_the_child(fresh_preloads):
    (fresh_preloads / "preload_ok.py").write_text("import builtins\nbuiltins.preload_count = getattr(builtins, 'preload_count', 0) + 1\n")
    (fresh_preloads / "preload_broken.py").write_text("raise ImportError('broken on purpose')\n")
    job = {"task": "no such task", "setup_sources": ["import preload_broken\nimport preload_ok\n", "import (\n"]}
    preload.preload_for(job)  # neither the broken module, the unknown task nor bad syntax raises
    preload.preload_for(job)
    import builtins
    try:
        assert "preload_ok" in sys.modules and builtins.preload_count == 1
        assert "preload_broken" not in sys.modules
    finally:
        del builtins.preload_count


def test_a_host_whose_torch_has_a_gpu_backend_preloads_nothing(fresh_preloads, monkeypatch):
    (fresh_preloads / "preload_ok.py").write_text("x = 1\n")
    monkeypatch.setattr(gpu, "gpu_backend_built", lambda: True)
    preload.preload_for({"task": "1.1", "setup_sources": ["import preload_ok\n"]})
    assert "preload_ok" not in sys.modules


def test_a_preload_that_initialises_cuda_stops_the_host(fresh_preloads, monkeypatch):
    """Children forked after CUDA is initialised cannot use it: a preload must not do that."""
    (fresh_preloads / "preload_ok.py").write_text("x = 1\n")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(RuntimeError, match="initialization error"):
        preload.preload_for({"task": "1.1", "setup_sources": ["import preload_ok\n"]})


FORKED_CHILD_USES_CUDA = """
import os, sys
import torch
from gptcourse.checking import probes
from gptcourse.checking.worker_host import gpu, preload
probes.load_meta_kernels()
preload.warm_up()
gpu.check_no_gpu_initialised()
pid = os.fork()
if pid == 0:
    try:
        torch.cuda.init()
        x = torch.ones(4, device="cuda", requires_grad=True)
        (x * 2).sum().backward()
        assert x.grad.sum().item() == 8.0
        torch.ones(3, requires_grad=True).sum().backward()  # and autograd on the CPU
    except BaseException as exc:
        print(f"child: {type(exc).__name__}: {exc}", file=sys.stderr)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("status", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.cuda
@needs_cuda
def test_a_child_forked_after_the_hosts_set_up_can_use_cuda_and_autograd():
    result = subprocess.run([sys.executable, "-c", FORKED_CHILD_USES_CUDA], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and "status 0" in result.stdout, result.stdout + result.stderr


# ------------------------------------------------------------------------------------------
# Chapter 05: training with dropout on a GPU
# ------------------------------------------------------------------------------------------

def _train_cases(expectations, task_id):
    return [(case, origin) for case, origin in zip(expectations.cases(task_id), expectations._origins[task_id])
            if case.kind == "train"]


def _drop_rate(case):
    return (case.args.get("cfg") or {}).get("drop_rate", 0.0)


@pytest.mark.parametrize("task_id", ["5.4", "5.7"])
def test_training_cases_run_without_dropout_on_cuda_and_with_it_on_the_cpu(task_id):
    """Dropout masks drawn on a GPU differ from the CPU's, whose numbers a GPU run is compared
    with: a GPU run of a case with dropout would never match, so it runs without dropout."""
    both, cpu_only = Expectations(5, ["cpu", "cuda"]), Expectations(5, ["cpu"])
    cases = _train_cases(both, task_id)
    on_cuda = [(c, o) for c, o in cases if c.device == "cuda"]
    assert on_cuda and all(_drop_rate(c) == 0.0 for c, _ in on_cuda)
    # The CPU grading is unchanged, dropout cases included.
    cpu_cases = [dumps(c.to_data()) for c, _ in cases if c.device == "cpu"]
    assert cpu_cases == [dumps(c.to_data()) for c, _ in _train_cases(cpu_only, task_id)]
    assert any(_drop_rate(case) > 0 for case, _ in cases if case.device == "cpu")
    # A case changed for the GPU has expected numbers of its own, and says so.
    changed = [(c, o) for c, o in on_cuda if o[1] == "cuda"]
    assert changed and all("drop_rate=0.0 on cuda" in c.label for c, _ in changed)
    assert all(o[1] is False for c, o in cases if c.device == "cpu")


def test_a_gpu_training_case_expects_the_references_numbers_without_dropout():
    from grader.grading.expectations import expectations

    both = Expectations(5, ["cpu", "cuda"])
    cases, origins = both.cases("5.4"), both._origins["5.4"]
    index = next(i for i, c in enumerate(cases) if c.device == "cuda" and "on cuda" in c.label)
    on_cpu = next(i for i, c in enumerate(cases) if c.device == "cpu" and origins[i][0] == origins[index][0])
    expected = dumps(both.expected("5.4")[index][0])
    assert expected == dumps(expectations(cases[index].on("cpu"))[0])  # the reference, no dropout, on the CPU
    assert expected != dumps(both.expected("5.4")[on_cpu][0])  # not the CPU run's numbers with dropout
