"""What the grader expects on a case: the reference's observations and the known variants'.

Always computed on the CPU in the grading process itself (which never runs student code);
a student's CUDA run is compared with the same CPU numbers, with the GPU tolerance.
"""
import functools

import torch

from gptcourse.probes import run_probe
from grader.hidden.cases import dropout_internals
from grader.hidden.variants import variants
from grader.reference import reference_object


def expectations(case):
    """(expected observations, known variants) where the variants are computed on first use.

    Variants are only needed to explain a failure, and computing them for every case costs
    more than all the rest of grading, so they come as a memoised function:
    variants() -> [(message, observations of a known wrong variant)].
    """
    cpu_case = case.on("cpu")
    expected = _seeded_probe(reference_object(case.task), cpu_case)
    if "error" in expected:
        raise RuntimeError(f"the reference fails on task {case.task}, {case.label}: {expected['error']}")
    expected.update(dropout_internals(cpu_case))
    return expected, functools.lru_cache(maxsize=None)(lambda: variant_observations(cpu_case))


def variant_observations(case):
    return [(message, _seeded_probe(obj, case)) for message, obj in variants(case.task)]


def _seeded_probe(obj, case):
    """Train-mode dropout draws random numbers: seed them so that fixtures are reproducible."""
    torch.manual_seed(0)
    return run_probe(obj, case)
