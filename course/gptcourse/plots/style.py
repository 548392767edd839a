"""What the pictures of several chapters share: the widest figure a notebook shows, the colours
that mean the same thing in more than one chapter (training and validation loss, plain bars,
the uniform guess), turning a tensor or array into NumPy, and a check of whole-number
arguments.

The colours of a single chapter live in that chapter's module, next to the code that uses them.
"""

from __future__ import annotations

import numpy as np
import torch

MAX_FIGURE_WIDTH = 10.0  # inches: about the width of a notebook's output area
BAR_COLOUR = "#6baed6"  # blue: the bars of a chart with a single series
TRAIN_COLOUR = "#1f77b4"  # blue: the training loss
VAL_COLOUR = "#d62728"  # red: the validation loss
UNIFORM_COLOUR = "#7f7f7f"  # grey: what a model that knows nothing would give


def _as_numpy(values) -> np.ndarray:
    """A float NumPy copy of a tensor (any device, with or without grad) or array."""
    if isinstance(values, torch.Tensor):
        # detach: drop the autograd graph; cpu: NumPy lives in main memory.
        return values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def _check_count(name, value, *, minimum):
    """Raise a clear error unless ``value`` is a whole number (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}.")
