"""Everything the course measures on a lent GPU, in one or two calls: tests, benchmarks, notebooks.

Prepare once, in the checkout that the device tool sends (the data mirror does not travel
with it, so copy it into an ignored folder that does):

    mkdir -p .gpu-carry && cp -r ../shared/data .gpu-carry/data && echo /.gpu-carry/ >> .git/info/exclude

then run, with the device tool, in calls of at most 10 minutes:

    run(command="python3 benchmarks/gpu_session.py", carry=[".gpu-carry"], timeout_s=600)

Stages, in this order unless --stages names another (the figures not measured yet come first), each under its own time
limit and all within --budget seconds (default 560: the call's 600 less a margin):

  ddp        benchmarks/ddp_bench.py: torchrun with one process (NCCL, DDP) against the fast
             training step of chapter 05's section 9 (not measured yet)
  pretrain   benchmarks/gpu_pretrain_bench.py: every speed-up rung and the loss check
             (three compilations: the compile rung, the larger batch, the loss check)
  generate   benchmarks/generate_bench.py: no cache, Task 6.5's cache, the static cache,
             the captured step; batch 1 and 8, 1,000 new tokens after 20, float32
  cuda       pytest -m cuda, on the test files that have CUDA tests
  ch05, ch06, ch07
             the masters, top to bottom as notebooks, their code cells run in order in one
             namespace (benchmarks/run_notebook.py: the machine has no Jupyter packages)

Measured on an H100 (2026-11-27, the machine's start not counted): pretrain 164 s, generate
115 s, cuda 54 s, ch05 245 s, ch06 61 s, ch07 35 s: two calls (before the ddp stage and chapter
05's section 10, which starts torchrun from the notebook, existed). The stages run in the order
--stages names them; what does not fit in the time left is skipped and named in the summary:
run it in a second call (e.g. --stages ch05), or with --quick (the notebooks' one-epoch runs)
when the device time left is short. Everything goes to
$OUT (at most 8 files come back): summary.txt, one log per benchmark and its JSON (the ddp
stage: its log only), the tests' log, the notebooks' log.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("OUT") or tempfile.mkdtemp(prefix="gpu-session-")  # $OUT: what the device tool brings back

# (name, command, the seconds it may take at most, the log it writes to). Times are guesses
# for an H100; the masters test's budget for a notebook is 300 s on two CPU cores.
PYTHON = sys.executable
STAGES = [
    ("ddp", [PYTHON, "benchmarks/ddp_bench.py"], 240, "ddp.log"),
    ("pretrain", [PYTHON, "benchmarks/gpu_pretrain_bench.py", "--steps", "6", "--warmup", "2", "--loss-steps", "8",
                  "--max-batch", "64", "--out-json", f"{OUT}/pretrain.json"], 240, "pretrain.log"),
    ("generate", [PYTHON, "benchmarks/generate_bench.py", "--new-tokens", "1000", "--prompt-tokens", "20",
                  "--batch", "1", "8", "--out-json", f"{OUT}/generate.json"], 150, "generate.log"),
    ("cuda", [PYTHON, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:cacheprovider", "--durations=5"], 150, "tests.log"),
    ("ch05", [PYTHON, "benchmarks/run_notebook.py", "solutions/05_pretraining.ipynb", "--expect",
              "final training loss", "tokens per second", "MFU (model FLOPs"], 400, "notebooks.log"),
    ("ch06", [PYTHON, "benchmarks/run_notebook.py", "solutions/06_sampling.ipynb"], 200, "notebooks.log"),
    ("ch07", [PYTHON, "benchmarks/run_notebook.py", "solutions/07_classification.ipynb"], 200, "notebooks.log"),
]
NOTEBOOK_STAGES = ("ch05", "ch06", "ch07")


def cuda_test_files():
    """The test files with a CUDA test: collecting the others needs Jupyter's packages."""
    found = []
    for folder, _, names in os.walk(os.path.join(REPO, "tests")):  # tests/course, tests/chapters, ...
        for name in names:
            path = os.path.join(folder, name)
            if (name.startswith("test_") and name.endswith(".py")
                    and "pytest.mark.cuda" in open(path, encoding="utf-8").read()):
                found.append(os.path.relpath(path, REPO))
    return sorted(found)


def environment():
    """The variables every stage runs with: the course on the path, the carried data mirror."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "course"), REPO]), PYTHONUNBUFFERED="1",
               MPLBACKEND="Agg")
    for mirror in (os.path.join(REPO, ".gpu-carry", "data"), os.path.join(REPO, "..", "shared", "data")):
        if os.path.isfile(os.path.join(mirror, "the-verdict.txt")):
            env.setdefault("GPTCOURSE_DATA_MIRROR", os.path.abspath(mirror))
    return env


def run_stage(name, command, limit, log_name, env):
    """Run one stage with its output appended to its log; return (status, seconds)."""
    started = time.perf_counter()
    with open(os.path.join(OUT, log_name), "a", encoding="utf-8") as log:
        log.write(f"\n===== {name}: {' '.join(command)}\n")
        log.flush()
        try:
            status = subprocess.run(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=limit).returncode
        except subprocess.TimeoutExpired:
            status = "timed out"
        log.write(f"===== {name}: {status} after {time.perf_counter() - started:.0f} s\n")
    return status, time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", nargs="*", default=[name for name, *_ in STAGES],
                        choices=[name for name, *_ in STAGES], help="which stages, in this order")
    parser.add_argument("--budget", type=float, default=560, help="seconds for all stages together")
    parser.add_argument("--quick", action="store_true",
                        help="the notebooks' quick runs (GPTCOURSE_QUICK_RUN: one epoch), when time is short")
    args = parser.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    env = environment()
    notebook_env = dict(env, GPTCOURSE_QUICK_RUN="1") if args.quick else env
    deadline = time.perf_counter() + args.budget
    summary = [f"python {sys.version.split()[0]}; data mirror: {env.get('GPTCOURSE_DATA_MIRROR', 'NONE')}"]
    summary.append(subprocess.run([PYTHON, "-c", "import torch; print('torch', torch.__version__, '|', "
                                   "torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA')"],
                                  capture_output=True, text=True, env=env).stdout.strip())
    by_name = {stage[0]: stage for stage in STAGES}
    for name, command, limit, log_name in (by_name[name] for name in args.stages):  # in the order asked for
        left = deadline - time.perf_counter()
        if left < 30:
            summary.append(f"{name}: NOT RUN, out of time (run it with --stages {name})")
            continue
        if name == "cuda":
            command = command + cuda_test_files()
        status, seconds = run_stage(name, command, min(limit, left), log_name,
                                    notebook_env if name in NOTEBOOK_STAGES else env)
        summary.append(f"{name}: {'ok' if status == 0 else f'FAILED ({status})'} in {seconds:.0f} s, log {log_name}")
        print(summary[-1], flush=True)
    with open(os.path.join(OUT, "summary.txt"), "w", encoding="utf-8") as file:
        file.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
