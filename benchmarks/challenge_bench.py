"""The class challenge's figures: time per entry, and the run-to-run noise that decides ties.

    python benchmarks/challenge_bench.py [--entries 4] [--jobs 2] [--budget-tokens N]

Makes a class of chapter 05 notebooks (the release notebook, whose challenge cell is the
baseline entry) that differ only in the entry's seed, runs `python -m grader leaderboard` on it
as an instructor would, and prints the time per entry (wall time of the whole run divided by the
entries, with --jobs entries at once) and the spread of the private loss over the seeds: the
noise that grader/outputs/leaderboard.py's TIE_WITHIN must exceed (docs/benchmarks.md).
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAPTER = "05_pretraining"


def class_with_seeds(folder, count):
    """`count` submissions whose entries are the release's baseline with seeds 1..count."""
    with open(os.path.join(REPO, "course", f"{CHAPTER}.ipynb"), encoding="utf-8") as f:
        release = json.load(f)
    for seed in range(1, count + 1):
        notebook = copy.deepcopy(release)
        cell = next(c for c in notebook["cells"] if c.get("id") == "challenge-entry")
        source = "".join(cell["source"])
        cell["source"] = source.replace('"seed": 123', f'"seed": {seed}')
        assert cell["source"] != source, "the release's challenge cell has no seed 123 to change"
        path = os.path.join(folder, f"seed_{seed}", f"{CHAPTER}.ipynb")
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(notebook, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget-tokens", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        class_with_seeds(os.path.join(work, "class"), args.entries)
        command = [sys.executable, "-m", "grader", "leaderboard", os.path.join(work, "class"),
                   "--out", os.path.join(work, "out"), "--jobs", str(args.jobs)]
        if args.budget_tokens:
            command += ["--budget-tokens", str(args.budget_tokens)]
        began = time.perf_counter()
        subprocess.run(command, check=True, cwd=REPO)
        seconds = time.perf_counter() - began
        with open(os.path.join(work, "out", "leaderboard.json"), encoding="utf-8") as f:
            board = json.load(f)
    rows = [r for r in board["entries"] if r["status"] == "ok"]
    losses = [r["private_loss"] for r in rows]
    print(f"entries: {len(board['entries'])} ({len(rows)} scored), --jobs {args.jobs}, budget "
          f"{board['challenge']['budget_tokens']:,} tokens, isolation {board['challenge']['isolation']['sandbox']}")
    print(f"wall time {seconds:.0f} s: {seconds / len(board['entries']) * args.jobs:.0f} s per entry on one core "
          f"({seconds / len(board['entries']):.0f} s per entry with {args.jobs} at once)")
    print(f"training time per entry: {statistics.median(r['seconds'] for r in rows):.0f} s (median)")
    if len(losses) > 1:
        print(f"private loss over {len(losses)} seeds: mean {statistics.mean(losses):.4f}, spread (max - min) "
              f"{max(losses) - min(losses):.4f}, standard deviation {statistics.stdev(losses):.4f}; ties within "
              f"{board['tie_within']}")


if __name__ == "__main__":
    main()
