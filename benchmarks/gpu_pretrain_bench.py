"""Model FLOPs utilisation of a GPT-2 124M training step on a CUDA GPU.

    python benchmarks/gpu_pretrain_bench.py [--batch 16] [--context 1024] [--steps 20] [--no-compile]

Builds the reference GPTModel in the GPT-2 124M shape (context 1024, no dropout), trains it
on random token ids with bf16 autocast and fused AdamW (and torch.compile unless
--no-compile), times --steps steps after --warmup untimed ones (compilation happens there),
and prints tokens per second and MFU against the GPU's peak bf16 throughput
(gptcourse.pretrain.PEAK_FLOPS). Without a CUDA device it says so and exits. It asserts nothing.
"""
import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.pretrain import count_parameters, mfu, model_flops_per_token, peak_flops  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU")
        return
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    cfg = {"vocab_size": 50257, "context_length": args.context, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
           "drop_rate": 0.0, "qkv_bias": False}
    torch.manual_seed(123)
    model = GPTModel(cfg).to(device)
    num_parameters = count_parameters(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
    step_model = model if args.no_compile else torch.compile(model)
    ids = torch.randint(0, cfg["vocab_size"], (args.batch, args.context + 1), device=device)
    inputs, targets = ids[:, :-1], ids[:, 1:]

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = step_model(inputs)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - begin) / args.steps
    tokens_per_second = args.batch * args.context / seconds
    utilisation = mfu(tokens_per_second, cfg, num_parameters, device)
    print(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}, "
          f"compile {'off' if args.no_compile else 'on'}")
    print(f"model: {num_parameters:,} parameters, {model_flops_per_token(cfg, num_parameters) / 1e9:.2f} GFLOP "
          f"per token (training)")
    print(f"batch {args.batch} x context {args.context}: {seconds * 1000:.1f} ms per step, "
          f"{tokens_per_second:,.0f} tokens/s")
    peak = peak_flops(device)
    if utilisation is None:
        print("MFU: unknown peak for this GPU (add it to gptcourse.pretrain.PEAK_FLOPS)")
    else:
        print(f"MFU: {utilisation:.1%} of {peak / 1e12:.0f} TFLOP/s (bf16 dense)")


if __name__ == "__main__":
    main()
