"""How long each master takes top to bottom, against its budget (tests/notebooks/test_masters_run.py).

    python benchmarks/masters_bench.py [CHAPTER ...]

Runs the masters in solutions/ one after another as nbclient runs them in the tests (offline,
with GPTCOURSE_DATA_MIRROR set, in the masters' folder), and prints each one's wall time, its
budget on two quiet CPU cores and how busy the machine was meanwhile (the load average), so that
a figure taken beside other work is read as such. It asserts nothing: the masters test only
guards against a hang.
"""
import os
import sys
import time

import nbformat
from nbclient import NotebookClient

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/ holds the helpers, tests/notebooks the test whose budgets this reports against.
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests"), os.path.join(REPO, "tests", "notebooks")]

from gptcourse.checking.tasks import CHAPTERS  # noqa: E402
from test_masters_run import BUDGET_SECONDS, HANG_SECONDS  # noqa: E402


def run_master(chapter):
    nb = nbformat.read(os.path.join(REPO, "solutions", f"{chapter}.ipynb"), as_version=4)
    client = NotebookClient(nb, timeout=HANG_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": os.path.join(REPO, "solutions")}})
    started = time.monotonic()
    client.execute()
    return time.monotonic() - started


def main(chapters):
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "course"), REPO])
    if not os.environ.get("GPTCOURSE_DATA_MIRROR"):
        os.environ["GPTCOURSE_DATA_MIRROR"] = os.path.abspath(os.path.join(REPO, "..", "shared", "data"))
    print(f"{'chapter':<26}{'seconds':>9}{'budget':>8}  load average (1 min) before -> after")
    for chapter in chapters:
        before = os.getloadavg()[0]
        seconds = run_master(chapter)
        verdict = "within" if seconds <= BUDGET_SECONDS[chapter] else "OVER"
        print(f"{chapter:<26}{seconds:>9.1f}{BUDGET_SECONDS[chapter]:>8}  {before:.1f} -> {os.getloadavg()[0]:.1f}  "
              f"{verdict}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(CHAPTERS))
