"""Progress bars that appear once a loop has been running for a moment.

`progress_bar` is tqdm's (`tqdm.auto`: a widget in a notebook, text elsewhere) with one
setting changed: the bar is drawn only after half a second. A cell that stops at once, because
it calls a task you have not finished yet, then shows its one-line message alone instead of an
empty bar above it; any loop long enough to wait for still gets its bar.
"""
from tqdm.auto import tqdm

SHOW_AFTER_SECONDS = 0.5


def progress_bar(*args, **kwargs):
    """tqdm(*args, **kwargs), drawn after SHOW_AFTER_SECONDS unless `delay` is given."""
    kwargs.setdefault("delay", SHOW_AFTER_SECONDS)
    return tqdm(*args, **kwargs)
