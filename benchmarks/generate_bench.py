"""Greedy generation without a cache, with chapter 06's cache, and with a static cache, on a
model of GPT-2 124M's shape.

    python benchmarks/generate_bench.py [--new-tokens 1000] [--prompt-tokens 20] [--batch 1 8]
                                        [--device cpu|cuda] [--threads 2] [--dtype float32|bfloat16]
                                        [--out-json FILE]

Builds the reference GPTModel with GPT_CONFIG_124M's shape (context 1024, no dropout, random
weights: speed does not depend on what the weights are), then, for each --batch, generates
--new-tokens tokens after the same random prompt of --prompt-tokens tokens, greedily, with:

1. no cache: chapter 06's `generate`, one token per call (the whole sequence goes through
   the model at every step);
2. the simple cache: gptcourse.kvcache.add_kv_cache with the reference
   KVCacheMultiHeadAttention (Task 6.5): the prompt once, then one token per call, the cache
   grown with torch.cat;
3. the static cache: gptcourse.kvcache.StaticCachedGPT, allocated once for the whole
   context and written in place;
4. on a GPU also the static cache with its one-token step captured as a CUDA graph.

It prints each run's time, tokens per second (all sequences of the batch), milliseconds per
token, the speed-up over no cache and whether its ids are identical to those of no cache,
and the time per token at a few positions. On CUDA it synchronises before every clock read.
Exit status 1 when some run's ids differ from no cache's.
"""
import argparse
import copy
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.kvcache import StaticCachedGPT, StepTimer, add_kv_cache, generate_greedy_cached  # noqa: E402
from grader.reference.ch04_gpt_model import GPT_CONFIG_124M, GPTModel  # noqa: E402
from grader.reference.ch06_sampling import KVCacheMultiHeadAttention, generate  # noqa: E402


def timed_greedy_without_cache(model, prompt, new_tokens, device):
    """generate's greedy path, one token at a time, timing each step."""
    idx, timer = prompt, StepTimer(device)
    for _ in range(new_tokens):
        idx = generate(model, idx, 1, GPT_CONFIG_124M["context_length"])
        timer.tick()
    return idx, timer.times


def timed_greedy_with_cache(cached, prompt, new_tokens, device):
    """The prompt through the cached model once, then one token per call, timing each new token
    (the first time includes the prompt)."""
    timer = StepTimer(device)
    idx = generate_greedy_cached(cached, prompt, new_tokens, after_each_token=timer.tick)
    return idx, timer.times


def cached_models(model, cfg, batch, device):
    """{name: a cached copy of model} for the cached runs on this device."""
    runs = {"simple cache (Task 6.5)": add_kv_cache(copy.deepcopy(model), cfg, KVCacheMultiHeadAttention),
            "static cache": StaticCachedGPT(copy.deepcopy(model), cfg, batch)}
    if device.type == "cuda":
        runs["static cache + CUDA graph"] = StaticCachedGPT(copy.deepcopy(model), cfg, batch).capture_decode_step()
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=1000)
    parser.add_argument("--prompt-tokens", type=int, default=20)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--out-json", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype)
    cfg = dict(GPT_CONFIG_124M, drop_rate=0.0)
    assert args.prompt_tokens + args.new_tokens <= cfg["context_length"], "prompt + new tokens must fit the context"

    torch.manual_seed(123)
    model = GPTModel(cfg).to(device=device, dtype=dtype).eval()
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(f"GPT-2 124M shape ({sum(p.numel() for p in model.parameters()):,} parameters), {args.dtype}, on {where}; "
          f"torch {torch.__version__}")
    print(f"prompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens, greedy, batch {args.batch}")

    figures, all_same = [], True
    for batch in args.batch:
        prompt = torch.randint(0, cfg["vocab_size"], (batch, args.prompt_tokens), device=device)
        generate(model, prompt, 2, cfg["context_length"])  # warm up kernels and allocator
        plain_ids, plain_times = timed_greedy_without_cache(model, prompt, args.new_tokens, device)
        runs = {"no cache": (plain_times, True)}
        for name, cached in cached_models(model, cfg, batch, device).items():
            timed_greedy_with_cache(cached, prompt, 2, device)  # warm up
            ids, times = timed_greedy_with_cache(cached, prompt, args.new_tokens, device)
            runs[name] = (times, torch.equal(ids, plain_ids))
            if not runs[name][1]:
                first = int((ids != plain_ids).any(dim=0).nonzero()[0])
                print(f"  {name}: the ids differ from no cache's from position {first} on")
            del cached
        figures.append(report(batch, runs, args))
        all_same &= all(same for _, same in runs.values())

    if args.out_json:
        with open(args.out_json, "w") as file:
            json.dump({"device": where, "torch": torch.__version__, "dtype": args.dtype,
                       "prompt_tokens": args.prompt_tokens, "new_tokens": args.new_tokens, "runs": figures}, file,
                      indent=1)
    return 0 if all_same else 1


def report(batch, runs, args):
    """Print one batch's table; return its figures."""
    print(f"\nbatch {batch}:")
    print(f"{'':<28}{'seconds':>9}{'tokens/s':>11}{'ms/token':>10}{'speed-up':>10}  identical ids")
    plain_seconds = sum(runs["no cache"][0])
    figures = []
    for name, (times, same) in runs.items():
        seconds = sum(times)
        figures.append({"batch": batch, "run": name, "seconds": seconds,
                        "tokens_per_second": batch * args.new_tokens / seconds,
                        "ms_per_token": 1e3 * seconds / args.new_tokens, "speed_up": plain_seconds / seconds,
                        "identical_ids": same})
        print(f"{name:<28}{seconds:>9.2f}{batch * args.new_tokens / seconds:>11.1f}"
              f"{1e3 * seconds / args.new_tokens:>10.2f}{plain_seconds / seconds:>9.1f}x  {'yes' if same else 'NO'}")
    positions = sorted({1, args.new_tokens // 4, args.new_tokens // 2, args.new_tokens - 2})
    print("time per token (ms) at position " + ", ".join(str(args.prompt_tokens + i) for i in positions) + ":")
    for name, (times, _) in runs.items():
        print(f"  {name:<26}" + " ".join(f"{1e3 * times[i]:7.1f}" for i in positions))
    return figures


if __name__ == "__main__":
    sys.exit(main())
