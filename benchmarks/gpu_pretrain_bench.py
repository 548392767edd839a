"""Model FLOPs utilisation of a GPT-2 124M training step on a GPU, one speed-up at a time.

    python benchmarks/gpu_pretrain_bench.py [--batch 16] [--context 1024] [--steps 10] [--warmup 3]
                                            [--max-batch 64] [--loss-steps 10] [--out-json FILE]
    python benchmarks/gpu_pretrain_bench.py --smoke   # a tiny model on the CPU: checks the code runs

Builds the reference GPTModel in the GPT-2 124M shape (no dropout) and times its training
step on random token ids for every rung of gptcourse.speedups.speed_ladder, in one run: the
plain float32 step, then TF32, autocast (bf16, or fp16 with a gradient scaler on a 7.x card),
fused AdamW, flash attention, the vocabulary padded to 50,304, torch.compile and the largest
batch that fits (doubling --batch up to --max-batch), each added to the ones before; the card
decides which rungs it has (gptcourse.runtime.runtime_profile). Each rung: --warmup untimed
steps (compilation happens there), then --steps timed ones; tokens per second, the speed-up
over the plain step, MFU against the card's peak (gptcourse.runtime.PEAK_FLOPS, its number
format named) and the peak memory.

Then the loss check: --loss-steps steps of the plain step and of the fastest one at --batch
(every rung but the largest batch), from the same weights on the same batches. 16-bit
autocast rounds the inputs of every matrix product to 8 (bf16) or 11 (fp16) significant
bits, a relative error of up to 0.4 % (bf16) per number that the sums mostly average out:
the losses must agree within LOSS_TOLERANCE (1 %, relative) at every step, else the script
says so and exits with status 1. Without a GPU and without --smoke it says so and exits.
"""
import argparse
import dataclasses
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.runtime import RuntimeProfile, gpt_parameter_count, runtime_profile  # noqa: E402
from gptcourse.speedups import compare_losses, format_ladder, measure_ladder, speed_ladder  # noqa: E402
from grader.reference.ch03_multihead_attention import MultiHeadAttention  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402

LOSS_TOLERANCE = 0.01  # relative, per step: see the module's text


def smoke_profile():
    """A made-up profile for the CPU: bf16 autocast and fused AdamW run there too (CPU
    kernels), so every rung's code runs; no compile (minutes on a CPU) and no TF32 (CUDA)."""
    return RuntimeProfile("cpu", "CPU (smoke test: checks the code, not the speed)",
                          autocast_dtype=torch.bfloat16, fused_adamw=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--max-batch", type=int, default=64)
    parser.add_argument("--loss-steps", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="a tiny model on the CPU, one step per rung")
    parser.add_argument("--out-json", help="also write the figures here")
    args = parser.parse_args(argv)
    cfg = {"vocab_size": 50257, "context_length": args.context, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
           "drop_rate": 0.0, "qkv_bias": False}
    if args.smoke:
        device, profile = torch.device("cpu"), smoke_profile()
        cfg.update(context_length=32, emb_dim=32, n_heads=2, n_layers=2)
        args.batch, args.steps, args.warmup, args.max_batch, args.loss_steps = 2, 1, 1, 4, 3
    elif torch.cuda.is_available():
        device = torch.device("cuda")
        profile = runtime_profile(device)
    else:
        print("no CUDA device: this benchmark needs a GPU (or --smoke, to check the code on the CPU)")
        return 0

    print(f"device: {profile.describe()}")
    print(f"torch {torch.__version__}")
    num_parameters = gpt_parameter_count(cfg)
    print(f"model: GPT-2 shape, {cfg['n_layers']} blocks, emb_dim {cfg['emb_dim']}, context {cfg['context_length']}, "
          f"{num_parameters:,} parameters; batch {args.batch}; {args.warmup} warm-up and {args.steps} timed steps "
          f"per rung")
    peak = profile.peak
    print("MFU against: " + (f"{peak.flops / 1e12:,.0f} TFLOP/s ({peak.dtype}, dense)" if peak else "no known peak"))

    def show(result):
        print(f"  {result.rung.name}: batch {result.batch_size}, {result.tokens_per_second:,.0f} tokens/s"
              + (f", MFU {result.mfu:.1%}" if result.mfu is not None else ""), flush=True)

    ladder = speed_ladder(profile)
    results = measure_ladder(GPTModel, MultiHeadAttention, cfg, profile, device, args.batch, warmup=args.warmup,
                             steps=args.steps, max_batch=args.max_batch, rungs=ladder, on_rung=show)
    print()
    print(format_ladder(results))
    for result in results:
        print(f"  {result.rung.name}: {result.rung.why}")

    fast = ladder[-1].settings  # every change but the larger batch
    plain_losses, fast_losses = compare_losses(GPTModel, MultiHeadAttention, cfg, ladder[0].settings, fast, device,
                                               args.batch, steps=args.loss_steps)
    worst = max(abs(f - p) / p for p, f in zip(plain_losses, fast_losses))
    agree = worst <= LOSS_TOLERANCE
    print(f"\nloss check, the first {args.loss_steps} steps from the same weights on the same batches "
          f"(batch {args.batch}):")
    print("  plain:   " + " ".join(f"{loss:.4f}" for loss in plain_losses))
    print("  fastest: " + " ".join(f"{loss:.4f}" for loss in fast_losses))
    print(f"  largest relative difference {worst:.2e}: {'within' if agree else 'NOT within'} "
          f"the tolerance of {LOSS_TOLERANCE:.0%}")

    if args.out_json:
        figures = {"device": profile.name, "torch": torch.__version__, "cfg": cfg,
                   "peak": peak._asdict() if peak else None,
                   "rungs": [{"name": r.rung.name, "settings": _plain(dataclasses.asdict(r.rung.settings)),
                              "batch": r.batch_size, "seconds_per_step": r.seconds_per_step,
                              "tokens_per_second": r.tokens_per_second, "mfu": r.mfu,
                              "peak_memory_gib": r.peak_memory_gib} for r in results],
                   "loss_check": {"plain": plain_losses, "fastest": fast_losses, "largest_relative_difference": worst,
                                  "tolerance": LOSS_TOLERANCE}}
        with open(args.out_json, "w") as file:
            json.dump(figures, file, indent=1)
    return 0 if agree else 1


def _plain(settings):
    return {key: str(value) if isinstance(value, torch.dtype) else value for key, value in settings.items()}


if __name__ == "__main__":
    sys.exit(main())
