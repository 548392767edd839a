"""From a worker's outcome to (status, feedback): the one place where a task is decided.

Used by the course grader (on observations sent by a worker process) and by the nbgrader
bridge (on observations made in the notebook's kernel), so both give the same grades.
"""
from gptcourse.judge import judge_detail


def verdict(task_id, cases, expected, outcome, settings=None):
    """(status, message, warnings) with status one of passed, failed, error, timeout."""
    if "killed" in outcome:
        if outcome["killed"] == "timeout":
            return ("timeout", f"your code did not finish within {outcome['limit']:g} s and was stopped "
                               f"(an infinite loop, or far too much work?)", [])
        return ("error", f"your code used more memory than the limit ({outcome['limit']} MB) and was "
                         f"stopped", [])
    if "malformed" in outcome:
        return ("error", f"the process running your code sent back something that is not a grading report "
                         f"({outcome['malformed']}): did your code change the course package or the "
                         f"grader's output?", [])
    if "died" in outcome:
        died = outcome["died"]
        how = f"exit code {died}" if isinstance(died, int) or str(died).lstrip("-").isdigit() else died
        return ("error", f"the process running your code ended before reporting ({how}): did your code "
                         f"call os._exit(), kill a process, or crash Python?", [])
    result = outcome["result"]
    warnings = list(result.get("warnings") or [])
    if outcome.get("ended_processes"):
        warnings.append(f"the grader ended {outcome['ended_processes']} process(es) that your code started "
                        f"and left running (solution cells should not start processes)")
    if result.get("fatal"):
        return "error", result["fatal"], warnings
    observations = result.get("observations") or []
    complete = len(observations) == len(cases) or (observations and "error" in observations[-1])
    if not complete:
        return "error", "the worker returned an incomplete set of observations", warnings
    for case, (want, variants), got in zip(cases, expected, observations):
        problem, caused_by_error = judge_detail(task_id, case, got, want, variants)
        if problem:
            status = "error" if caused_by_error else "failed"
            return status, f"Failed on {case.label} [{case.device}]: {problem}", warnings
    return "passed", f"All {len(cases)} hidden test cases passed.", warnings
