"""What DDP costs on one GPU: torchrun with one process against chapter 05's fast training step.

    python benchmarks/ddp_bench.py [--batch 16] [--context 512] [--steps 10] [--warmup 3]
                                   [--data tinyshakespeare] [--out-json FILE]
    python benchmarks/ddp_bench.py --smoke   # a tiny model on two CPU processes: the code runs, no figures

Two measurements of the same model, the reference GPTModel in the shape of chapter 05's GPU run
(gptcourse.pretrain.gpu_run: GPT-2 124M's layers, context 512) without dropout, at the same
batch, with the same speed-ups (the last rung of gptcourse.speedups.speed_ladder but the largest
batch: TF32, bf16 autocast, fused AdamW, flash attention, the padded vocabulary, torch.compile, as
far as the card has them):

1. the fast path, as chapter 05's section 9 times it (gptcourse.speedups.measure_ladder): one
   process, random token ids already on the GPU, --warmup untimed steps, then --steps timed ones;
2. `torchrun --standalone --nproc_per_node=1 -m gptcourse.ddp_pretrain`, NCCL, on the master
   notebook's GPTModel: the real data set through a DistributedSampler and a DataLoader, the
   model in DistributedDataParallel, --warmup + --steps steps of which the script times those
   after its first three (ddp_pretrain.TIMING_SKIP_STEPS; --warmup is 3 for that reason); no
   evaluation or checkpoint before the last step (the script times up to the end of that step).

The target: DDP within 5 % of the fast path in tokens per second. The script prints both
figures and their ratio; it asserts nothing. With --smoke both run on the CPU with a tiny model
(--fast-path on, so that they train with the same settings), and the DDP side with two processes.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.ddp_pretrain import TIMING_SKIP_STEPS, torchrun_command  # noqa: E402
from gptcourse.pretrain import gpu_run  # noqa: E402
from gptcourse.runtime import runtime_profile  # noqa: E402
from gptcourse.speedups import measure_ladder, speed_ladder  # noqa: E402
from grader.reference.ch03_multihead_attention import MultiHeadAttention  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402

TARGET = 0.95  # DDP's tokens per second at least 95 % of the fast path's
MASTER = os.path.join(REPO, "solutions", "05_pretraining.ipynb")  # its GPTModel: chapter 04's master's
SMOKE_CHANGES = {"context_length": 32, "emb_dim": 32, "n_heads": 2, "n_layers": 1}


def fast_path(cfg, device, batch, warmup, steps):
    """Tokens per second of the fastest rung (all but the largest batch), timed as section 9 times it."""
    rung = [r for r in speed_ladder(runtime_profile(device)) if not r.largest_batch][-1]
    result, = measure_ladder(GPTModel, MultiHeadAttention, cfg, runtime_profile(device), device, batch,
                             warmup=warmup, steps=steps, rungs=[rung])
    return rung, result.tokens_per_second


def ddp_run(cfg, device, batch, steps, data, nproc):
    """Tokens per second of ddp_pretrain's run, as its summary gives them (process 0 writes it)."""
    folder = tempfile.mkdtemp(prefix="ddp-bench-")
    summary = os.path.join(folder, "summary.json")
    changes = {key: cfg[key] for key in ("context_length", "emb_dim", "n_heads", "n_layers", "drop_rate")}
    command = torchrun_command(nproc, MASTER, "--device", device.type, "--steps", steps, "--batch-size", batch,
                               "--config", json.dumps(changes), "--data", data, "--fast-path", "on",
                               "--eval-every", 0, "--save-every", 0, "--out", os.path.join(folder, "out"),
                               "--summary", summary)
    print(" ".join(["torchrun", *command[3:]]), flush=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "course"), REPO]), OMP_NUM_THREADS="1")
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout[-3000:], result.stderr[-3000:], sep="\n")
        raise SystemExit(f"the DDP run failed (exit status {result.returncode})")
    with open(summary, encoding="utf-8") as f:
        return json.load(f)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16, help="the global batch, both sides")
    parser.add_argument("--context", type=int, default=512)
    parser.add_argument("--steps", type=int, default=10, help="timed steps, both sides")
    parser.add_argument("--warmup", type=int, default=TIMING_SKIP_STEPS, help="untimed steps first (compilation)")
    parser.add_argument("--data", default="tinyshakespeare", help="the DDP run's data set (gptcourse.data)")
    parser.add_argument("--smoke", action="store_true", help="a tiny model on the CPU: checks the code runs")
    parser.add_argument("--out-json", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.smoke:
        device, nproc = torch.device("cpu"), 2
        cfg = dict(gpu_run(device).cfg, drop_rate=0.0, **SMOKE_CHANGES)
        args.batch, args.steps, args.data = 4, 3, "the-verdict"
    elif torch.cuda.is_available():
        device, nproc = torch.device("cuda"), 1
        cfg = dict(gpu_run(device).cfg, drop_rate=0.0, context_length=args.context)
    else:
        print("no CUDA device: this benchmark needs a GPU (or --smoke, to check the code on the CPU)")
        return 0
    if args.warmup != TIMING_SKIP_STEPS:
        print(f"note: the DDP side always leaves {TIMING_SKIP_STEPS} steps untimed; --warmup is {args.warmup}")

    print(f"device: {runtime_profile(device).describe()}\ntorch {torch.__version__}")
    print(f"model: {cfg['n_layers']} blocks, emb_dim {cfg['emb_dim']}, context {cfg['context_length']}, no dropout; "
          f"batch {args.batch}; {args.steps} timed steps", flush=True)
    rung, fast = fast_path(cfg, device, args.batch, args.warmup, args.steps)
    print(f"fast path ({rung.name}, section 9's settings): {fast:,.0f} tokens per second", flush=True)
    ddp = ddp_run(cfg, device, args.batch, TIMING_SKIP_STEPS + args.steps, args.data, nproc)
    ratio = ddp["tokens_per_second"] / fast
    print(f"torchrun, {nproc} process{'es' if nproc > 1 else ''} ({ddp['timed_steps']} timed steps): "
          f"{ddp['tokens_per_second']:,.0f} tokens per second")
    verdict = "meets" if ratio >= TARGET else "MISSES"
    print(f"DDP / fast path: {ratio:.3f} ({verdict} the target: at least {TARGET:.2f}, within 5 %)"
          + (" [smoke test: the figures mean nothing]" if args.smoke else ""))
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as f:
            json.dump({"device": runtime_profile(device).name, "torch": torch.__version__, "cfg": cfg,
                       "batch": args.batch, "fast_path_tokens_per_second": fast, "ddp": ddp, "ratio": ratio,
                       "smoke": args.smoke}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
