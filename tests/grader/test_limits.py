"""What a student reads when a limit stopped their code, and what the grader accepts from a
worker about it: the time limit says where the code was, running out of memory has its own
status and sentence, whatever error the allocation failure took (the graded runs are in
test_bad_submissions.py; nbgrader's side in tests/notebooks/test_nbgrader_agreement.py)."""
import signal
import sys

import pytest

from gptcourse.checking import findings
from gptcourse.checking.worker_host.where import where_stopped
from grader.grading import pool
from grader.outputs.class_report import mistake_of
from grader.grading.verdict import memory_exhausted, requested_bytes, timeout_verdict, verdict


def test_a_timeout_says_the_line_and_the_step_when_the_worker_could_say_them():
    judged = verdict("2.1", [], [], {"killed": "timeout", "limit": 60.0, "line": 3,
                                     "step": "calling simple_self_attention(inputs)"})
    assert judged.status == "timeout"
    assert judged.message == ("your code did not finish within 60 s and was stopped at line 3 of your "
                              "solution cell, while calling simple_self_attention(inputs) (an infinite "
                              "loop, or far too much work?)")
    assert timeout_verdict({"killed": "timeout", "limit": 8}).message == (
        "your code did not finish within 8 s and was stopped (an infinite loop, or far too much work?)")


@pytest.mark.parametrize("error_type,message", [
    ("RuntimeError", "std::bad_alloc"),
    ("RuntimeError", "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
                     "you tried to allocate 40000000 bytes. Error code 12 (Cannot allocate memory)"),
    ("MemoryError", ""),
    ("OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB"),
])
def test_an_allocation_that_failed_is_running_out_of_memory(error_type, message):
    assert memory_exhausted({"type": error_type, "message": message})


@pytest.mark.parametrize("message", ["mat1 and mat2 shapes cannot be multiplied (6x3 and 2x2)",
                                     "Expected all tensors to be on the same device"])
def test_other_runtime_errors_are_not(message):
    assert not memory_exhausted({"type": "RuntimeError", "message": message})


def test_the_memory_verdict_has_its_own_status_finding_and_sentence():
    outcome = {"killed": "memory", "limit": 2048}
    judged = verdict("2.4", [], [], outcome)
    assert judged.status == "memory" and judged.finding.kind == "memory"
    assert judged.message == ("your code used more than the 2,048 MB memory limit and was stopped — a loop "
                              "that never ends, or one that keeps tensors that require grad (keep loss.item(), "
                              "not loss)?")
    record = {"status": "memory", "finding": judged.finding.to_json(), "feedback": judged.message}
    assert mistake_of(record) == ("memory", "used more than the memory limit")
    assert "memory" in findings.KINDS


def test_one_allocation_larger_than_the_limit_says_its_size():
    error = {"type": "RuntimeError", "message": "DefaultCPUAllocator: can't allocate memory: you tried to "
                                                "allocate 400000000000 bytes.", "where": "line 2: big = ...",
             "step": "calling f(x)"}
    assert requested_bytes(error) == 400_000_000_000
    from grader.grading.verdict import memory_verdict

    judged = memory_verdict(1024, error, requested=requested_bytes(error))
    assert judged.message == ("your code tried to allocate 372.5 GB at once, more than the 1,024 MB memory "
                              "limit at line 2 of your solution cell, while calling f(x) — check the sizes "
                              "of the tensors you create")


def test_the_pool_keeps_a_plausible_line_and_step_and_nothing_else():
    base = {"killed": "timeout", "limit": 8}
    assert pool.outcome_of({"outcome": dict(base, line=3, step="calling f(x)")}) == dict(base, line=3, step="calling f(x)")
    for line, step in ((True, 5), (-1, ""), ("3", "x" * 201), (10**8, None)):
        assert pool.outcome_of({"outcome": dict(base, line=line, step=step)}) == base
    scrubbed = pool.outcome_of({"outcome": dict(base, step="secret line")},
                               scrub=lambda message: dict(message, fatal=message["fatal"].replace("secret", "[withheld]")))
    assert scrubbed["step"] == "[withheld] line"


def test_where_stopped_finds_the_innermost_line_of_the_students_cell_and_the_probes_step():
    source = "def f():\n    return g()\ndef g():\n    return sys._getframe()\n"
    namespace = {"sys": sys}
    exec(compile(source, "<student cell>", "exec"), namespace)
    frame = namespace["f"]()
    assert where_stopped(frame, "<student cell>") == {"line": 4}
    assert where_stopped(frame, {"elsewhere"}) == {}


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_the_hidden_tests_time_limit_in_a_kernel_stops_a_loop_and_says_where():
    from gptcourse.checking.worker_host.where import code_files
    from grader.nbgrading.bridge import _OutOfTime, _time_limit

    source = "def spin(x):\n    i = 0\n    while i < 3:\n        x = x + 1\n    return x\n"
    namespace = {}
    exec(compile(source, "<cell 7>", "exec"), namespace)
    with pytest.raises(_OutOfTime):
        with _time_limit(0.2, code_files([namespace["spin"]])) as where:
            namespace["spin"](0)
    assert where == {"line": 3}
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the timer is gone afterwards
