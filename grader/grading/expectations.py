"""What the grader expects on a case: the reference's observations and the known mistakes'.

Always computed on the CPU in the grading process itself (which never runs student code);
a student's CUDA run is compared with the same CPU numbers, with the GPU tolerance. A case
on the meta device (the device pass, see gptcourse/checking/probes.py) expects what the reference
gives there: no error, no observations.
"""
import functools

import torch

from gptcourse.checking.probes import META, ProbeContext, run_probe
from grader.chapters import expectation_extras, mistakes
from grader.reference import reference_earlier, reference_objects


def expectations(case):
    """(expected observations, known mistakes) where the mistakes are observed on first use.

    Known mistakes are only needed to explain a failure, and observing them on every case costs
    more than all the rest of grading, so they come as a memoised function:
    mistakes() -> [(message, observations of the known mistake)].
    """
    if case.device == META:
        # The device pass records nothing; what it expects is that nothing goes wrong.
        # (tests/test_chapter_structure.py checks that the reference gives exactly that.)
        return {}, lambda: []
    reference_case = case.on("cpu")
    expected = seeded_probe(reference_objects(case.task), reference_case)
    if "error" in expected:
        raise RuntimeError(f"the reference fails on task {case.task}, {case.label} "
                           f"[{reference_case.device}]: {expected['error']}")
    expected.update(expectation_extras(reference_case))
    return expected, functools.lru_cache(maxsize=None)(lambda: mistake_observations(reference_case))


def mistake_observations(case):
    return [(message, seeded_probe(names_with_mistake(case.task, obj), case)) for message, obj in mistakes(case.task)]


def names_with_mistake(task_id, mistake):
    """The task's graded names, the reference's, with a known mistake's object in place of the
    first (or a dict of objects in place of the names it gives)."""
    reference = reference_objects(task_id)
    if isinstance(mistake, dict):
        return {**reference, **mistake}
    return {**reference, next(iter(reference)): mistake}


def seeded_probe(names, case):
    """Train-mode dropout draws random numbers: seed them so that fixtures are reproducible.
    Earlier tasks' names are the reference's, as they are for the student's code."""
    torch.manual_seed(0)
    return run_probe(names, case, ProbeContext(earlier=reference_earlier(case.task)))
