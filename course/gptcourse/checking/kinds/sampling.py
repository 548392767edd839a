"""The kind that draws from a student's random sampler and judges the counts statistically.

| kind    | exercises                          | observations                                  |
|---------|------------------------------------|-----------------------------------------------|
| Sampler | a random sampler, drawn many times | num_draws, counts (judged statistically)      |

The statistics themselves (acceptance intervals, how well counts fit) are in statistics.py.
"""
import numpy as np
import torch

from ..probes import ProbeFailure
from .base import Kind
from .statistics import _misfit, binomial_acceptance


class Sampler(Kind):
    """A random sampler, drawn many times; judged on how often each outcome came up.

    call(probe, fn) -> a 1-D sequence of integer outcomes (the chapter decides how: one call
    with a large batch, or a loop). args["num_outcomes"] outcomes are counted. The judge
    needs expected["internals/probs"], each outcome's probability (the grader's side adds
    it): an outcome of probability 0 must never come up, one of probability 1 every time,
    and every other count must lie inside its exact binomial acceptance interval. Each
    interval leaves out at most false_failure / (number of such outcomes) of the binomial's
    probability, so a correct sampler fails a case with probability at most false_failure
    (1e-7 by default), whatever order it draws its random numbers in. Where the counts are
    off, expected["internals/mistakes"] ([(message, probabilities)], optional) names the
    known wrong distribution they fit. describe(k, case) -> how feedback names outcome k.
    Torch's random numbers are seeded from the case, so a run is reproducible.
    """

    def __init__(self, call, false_failure=1e-7, describe=None):
        self.call = call
        self.false_failure = false_failure
        self.describe = describe or (lambda k, case: f"outcome {k}")

    def probe(self, probe):
        torch.manual_seed(probe.ctx.seed % 2**31)
        fn = probe.obj
        step = f"drawing samples with {getattr(fn, '__name__', 'your function')}"

        def drawing(*args, **kwargs):  # the step is named when the code under test runs, whatever call did before
            probe.step = step
            return fn(*args, **kwargs)

        probe.step = step
        draws = np.asarray(to_int_list(self.call(probe, drawing)), dtype=np.int64)
        size = probe.case.args["num_outcomes"]
        if draws.size and (draws.min() < 0 or draws.max() >= size):
            raise ProbeFailure(f"a sample is outside 0..{size - 1}: {int(draws.min())}..{int(draws.max())}")
        probe.record_value("num_draws", int(draws.size), "the number of samples")
        probe.record_value("counts", np.bincount(draws, minlength=size), "how often each outcome came up")

    def owns(self, key):
        return key == "counts"

    def judge_key(self, key, got, expected, case):
        counts = got.get("counts")
        probs = np.asarray(expected.get("internals/probs"), dtype=np.float64)
        if not isinstance(counts, np.ndarray) or counts.shape != probs.shape:
            return "the samples could not be counted"
        impossible = np.flatnonzero((probs == 0) & (counts > 0))
        off = None if impossible.size else self.outside(counts, probs)
        if not impossible.size and off is None:
            return None
        fits = []  # the known wrong distributions the counts are consistent with, best fit first
        for message, wrong in expected.get("internals/mistakes", ()):
            wrong = np.asarray(wrong, dtype=np.float64)
            if not ((wrong == 0) & (counts > 0)).any() and self.outside(counts, wrong) is None:
                fits.append((_misfit(counts, wrong), message))
        if fits:
            return f"the samples follow another distribution — it looks like {min(fits)[1]}"
        if impossible.size:
            k = int(impossible[0])
            return (f"{self.describe(k, case)} came up {int(counts[k])} times although its probability is 0 "
                    f"(it should have been filtered out)")
        k, low, high = off
        n = int(counts.sum())
        return (f"{self.describe(k, case)} came up {int(counts[k])} times in {n} draws, expected between {low} "
                f"and {high} (probability {probs[k]:.4f}): the samples do not follow the right distribution")

    def outside(self, counts, probs):
        """(outcome, low, high) of the first count outside its acceptance interval, or None."""
        n = int(counts.sum())
        uncertain = (probs > 0) & (probs < 1)
        alpha = self.false_failure / max(1, int(uncertain.sum()))
        for k in range(len(probs)):
            low, high = binomial_acceptance(n, float(probs[k]), alpha)
            if not low <= counts[k] <= high:
                return k, low, high
        return None


def to_int_list(value):
    if isinstance(value, torch.Tensor):
        return torch.Tensor.detach(value).cpu().reshape(-1).tolist()
    return [int(v) for v in np.asarray(value).reshape(-1)]
