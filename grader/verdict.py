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


class Verdict(NamedTuple):
    status: str  # passed, failed, error or timeout
    message: str
    warnings: list
    finding: Optional[Finding] = None  # None when passed


def verdict(task_id, cases, expected, outcome, settings=None):
    """The Verdict on one task's outcome (what its worker reported, or how it ended)."""
    if "killed" in outcome:
        if outcome["killed"] == "timeout":
            return Verdict("timeout", f"your code did not finish within {outcome['limit']:g} s and was stopped "
                                      f"(an infinite loop, or far too much work?)", [],
                           Finding("timeout", detail="did not finish in time"))
        what = "your code used more memory than the limit"
        return Verdict("error", f"{what} ({outcome['limit']} MB) and was stopped", [], Finding("error", detail=what))
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
    for case, (want, variants), got in zip(cases, expected, observations):
        problem, finding = judge_finding(task_id, case, got, want, variants)
        if problem:
            status = "error" if finding.kind == "error" else "failed"
            return Verdict(status, f"Failed on {case.label} [{case.device}]: {problem}", warnings,
                           replace(finding, case=case.label, device=str(case.device)))
    return Verdict("passed", f"All {len(cases)} hidden test cases passed.", warnings)
