"""From a worker's outcome to (status, feedback): the one place where a task is decided.

Used by the course grader (on observations sent by a worker process) and by the nbgrader
bridge (on observations made in the notebook's kernel), so both give the same grades.
Besides the message, a verdict that is not a pass carries a Finding (gptcourse/checking/findings.py):
the same verdict as fields, for the class report.
"""
from dataclasses import replace
from typing import NamedTuple, Optional

from gptcourse.checking.findings import Finding
from gptcourse.checking.judge import judge_finding
# What a failed allocation looks like and the words for it are the student package's: the self-check
# says them too. memory_exhausted and requested_bytes are imported from here as well.
from gptcourse.checking.memory import memory_exhausted, memory_message, requested_bytes, where_text


class Verdict(NamedTuple):
    status: str  # passed, failed, error, timeout or memory
    message: str
    warnings: list
    finding: Optional[Finding] = None  # None when passed


def verdict(task_id, cases, expected, outcome, settings=None):
    """The Verdict on one task's outcome (what its worker reported, or how it ended)."""
    if outcome.get("killed") == "timeout":
        return timeout_verdict(outcome)
    if outcome.get("killed") == "memory":
        return memory_verdict(outcome["limit"], outcome)
    if "malformed" in outcome:
        what = "the process running your code sent back something that is not a grading report"
        return Verdict("error", f"{what} ({outcome['malformed']}): did your code change the course package or "
                                f"the grader's output?", [], Finding("error", detail=what))
    if "died" in outcome:
        died = outcome["died"]
        how = f"exit code {died}" if isinstance(died, int) or str(died).lstrip("-").isdigit() else died
        what = "the process running your code ended before reporting"
        return Verdict("error", f"{what} ({how}): did your code call os._exit(), kill a process, or crash Python?",
                       [], Finding("error", detail=what))
    result = outcome["result"]
    warnings = list(result.get("warnings") or [])
    if outcome.get("ended_processes"):
        warnings.append(f"the grader ended {outcome['ended_processes']} process(es) that your code started "
                        f"and left running (solution cells should not start processes)")
    if result.get("fatal"):
        # The worker's own words (a syntax error, a missing name): written where student code ran.
        return Verdict("error", result["fatal"], warnings, Finding("error", detail=result["fatal"]))
    observations = result.get("observations") or []
    complete = len(observations) == len(cases) or (observations and "error" in observations[-1])
    if not complete:
        message = "the worker returned an incomplete set of observations"
        return Verdict("error", message, warnings, Finding("error", detail=message))
    for case, (want, mistakes), got in zip(cases, expected, observations):
        if "error" in got and memory_exhausted(got["error"]):
            status, message, _, finding = memory_verdict(getattr(settings, "memory_mb", None), got["error"],
                                                         requested=requested_bytes(got["error"]))
            return Verdict(status, f"Failed on {case.label} [{case.device}]: {message}", warnings,
                           replace(finding, case=case.label, device=str(case.device)))
        problem, finding = judge_finding(task_id, case, got, want, mistakes)
        if problem:
            status = "error" if finding.kind == "error" else "failed"
            return Verdict(status, f"Failed on {case.label} [{case.device}]: {problem}", warnings,
                           replace(finding, case=case.label, device=str(case.device)))
    return Verdict("passed", f"All {len(cases)} hidden test cases passed.", warnings)


def timeout_verdict(outcome):
    """A task stopped at its time limit: how long it had, and where its code was (the line of the
    solution cell, and what the grader was doing) when the child could say."""
    where = where_text(outcome.get("line"), outcome.get("step"))
    message = (f"your code did not finish within {outcome['limit']:g} s and was stopped{where} "
               f"(an infinite loop, or far too much work?)")
    return Verdict("timeout", message, [], Finding("timeout", detail="did not finish in time",
                                                   step=outcome.get("step") or ""))


def memory_verdict(limit_mb, where, requested=None):
    """A task that ran out of memory, stopped by the worker (its memory watch) or failing to
    allocate under the worker's cap. `where`: an outcome with line and step, or an error record
    (its "where" is "line 19: <code>", its "step" what the probe was doing). The words are
    gptcourse.checking.memory's, which the self-check uses too."""
    message, detail = memory_message(limit_mb, where, requested)
    return Verdict("memory", message, [], Finding("memory", detail=detail, step=where.get("step") or ""))
