"""Counting statistics for judging random outputs: exact binomial acceptance intervals and a
chi-square measure of how far counts are from a distribution. No torch, no kinds: numbers in,
numbers out.
"""
import functools
import math

import numpy as np


def _misfit(counts, probs):
    """How far counts are from n * probs, in squared standard deviations (a chi-square)."""
    n = counts.sum()
    spread = n * probs * (1 - probs)
    inside = spread > 0
    return float((((counts - n * probs)[inside]) ** 2 / spread[inside]).sum())


def binomial_acceptance(n, prob, alpha):
    """[low, high]: the counts of a Binomial(n, prob) whose lower and upper tails are each above
    alpha / 2; a count outside comes up with probability at most alpha. Exact: the pmf is
    computed in logs from lgamma, no normal approximation."""
    if prob <= 0:
        return 0, 0
    if prob >= 1:
        return n, n
    k = np.arange(n + 1)
    log_factorial = _log_factorials(n)
    log_pmf = (log_factorial[n] - log_factorial[k] - log_factorial[n - k]
               + k * np.log(prob) + (n - k) * np.log1p(-prob))
    pmf = np.exp(log_pmf)
    at_most = np.cumsum(pmf)  # P(X <= k)
    at_least = np.cumsum(pmf[::-1])[::-1]  # P(X >= k)
    inside = np.flatnonzero((at_most > alpha / 2) & (at_least > alpha / 2))
    return int(inside[0]), int(inside[-1])


@functools.lru_cache(maxsize=8)
def _log_factorials(n):
    return np.array([math.lgamma(i + 1) for i in range(n + 1)])
