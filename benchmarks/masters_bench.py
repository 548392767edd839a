"""How long each master takes top to bottom, against its budget (tests/notebooks/test_masters_run.py).

    python benchmarks/masters_bench.py [CHAPTER ...]
    python benchmarks/masters_bench.py --quick-in-test    # 06, 07 and 09, in full

Runs the masters in solutions/ one after another as nbclient runs them in the tests (offline,
with GPTCOURSE_DATA_MIRROR set, in the masters' folder), always in full (GPTCOURSE_QUICK_RUN is
unset), and prints each one's wall time, its budget on two quiet CPU cores and how busy the
machine was meanwhile (the load average), so that a figure taken beside other work is read as
such. The masters test only guards against a hang, so the times are not held to the budgets.

Each run is then checked as the masters test checks it (check_run: the check cells' hidden tests
passed, the carry-over cells' self-checks, and EXPECTED_OUTPUT, the same table): the test runs
chapters 06, 07 and 09 in quick mode (QUICK_CHAPTERS), so their full runs and chapter 09's
reference numbers (the 55 responses) are checked here, by `--quick-in-test`. The exit status is 1 when a
master failed a check or raised.
"""
import argparse
import os
import sys
import time
import traceback

import nbformat
from nbclient import NotebookClient

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/ holds the helpers, tests/notebooks the test whose budgets and checks this uses.
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests"), os.path.join(REPO, "tests", "notebooks")]

from gptcourse.checking.tasks import CHAPTERS  # noqa: E402
from gptcourse.device import get_device  # noqa: E402
from gptcourse.pretrain import QUICK_ENV_VAR  # noqa: E402
from test_masters_run import BUDGET_SECONDS, HANG_SECONDS, QUICK_CHAPTERS, check_run  # noqa: E402


def run_master(chapter):
    """(seconds, the executed notebook)."""
    nb = nbformat.read(os.path.join(REPO, "solutions", f"{chapter}.ipynb"), as_version=4)
    client = NotebookClient(nb, timeout=HANG_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": os.path.join(REPO, "solutions")}})
    started = time.monotonic()
    client.execute()
    return time.monotonic() - started, nb


def main(chapters):
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "course"), REPO])
    os.environ.pop(QUICK_ENV_VAR, None)  # the full runs: the kernels inherit this environment
    if not os.environ.get("GPTCOURSE_DATA_MIRROR"):
        os.environ["GPTCOURSE_DATA_MIRROR"] = os.path.abspath(os.path.join(REPO, "..", "shared", "data"))
    device_type = get_device().type  # the device the notebooks pick
    failed = []
    print(f"{'chapter':<26}{'seconds':>9}{'budget':>8}  load average (1 min) before -> after")
    for chapter in chapters:
        before = os.getloadavg()[0]
        started = time.monotonic()
        try:
            seconds, nb = run_master(chapter)
            check_run(nb, chapter, device_type)
            problem = None
        except Exception as error:  # noqa: BLE001 - report the chapter's failure, then run the next one
            seconds, problem = time.monotonic() - started, error
        verdict = "within" if seconds <= BUDGET_SECONDS[chapter] else "OVER"
        print(f"{chapter:<26}{seconds:>9.1f}{BUDGET_SECONDS[chapter]:>8}  {before:.1f} -> {os.getloadavg()[0]:.1f}  "
              f"{verdict}{'  FAILED (below)' if problem else ''}", flush=True)
        if problem:
            failed.append(chapter)
            traceback.print_exception(type(problem), problem, problem.__traceback__, file=sys.stdout)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help="the masters to run (default: every chapter)")
    parser.add_argument("--quick-in-test", action="store_true",
                        help=f"the masters the test runs in quick mode only: {', '.join(QUICK_CHAPTERS)}")
    args = parser.parse_args(argv)
    if args.quick_in_test and args.chapters:
        parser.error("give chapters or --quick-in-test, not both")
    unknown = [chapter for chapter in args.chapters if chapter not in CHAPTERS]
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)} (the chapters: {', '.join(CHAPTERS)})")
    return list(QUICK_CHAPTERS) if args.quick_in_test else args.chapters or list(CHAPTERS)


if __name__ == "__main__":
    sys.exit(main(parse_args()))
