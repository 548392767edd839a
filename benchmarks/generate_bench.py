"""Greedy generation without a cache, with chapter 06's cache, and with a static cache, on a
model of GPT-2 124M's shape.

    python benchmarks/generate_bench.py [--new-tokens 1000] [--prompt-tokens 20] [--batch 1 8]
                                        [--device cpu|cuda] [--threads 2] [--dtype float32|bfloat16]
                                        [--out-json FILE]
    python benchmarks/generate_bench.py --smoke   # a tiny model, 20 tokens: checks the code runs

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

The runs take turns, one token each (take_turns), so that a change in the machine's load
slows them alike: the speed-ups hold on a shared machine too. It prints each run's time (the
sum of its steps), tokens per second (all sequences of the batch), milliseconds per token, the
speed-up over no cache and whether its ids are identical to those of no cache, and the time
per token at a few positions. On CUDA it synchronises before every clock read. Exit status 1
when some run's ids differ from no cache's.
"""
import argparse
import copy
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.kvcache import StaticCachedGPT, add_kv_cache, generate_greedy_cached, greedy_cached_steps  # noqa: E402
from grader.reference.ch04_gpt_model import GPT_CONFIG_124M, GPTModel  # noqa: E402
from grader.reference.ch06_sampling import KVCacheMultiHeadAttention, generate  # noqa: E402


def steps_without_cache(model, prompt, new_tokens, context_length):
    """generate's greedy path, one token per call: yields the ids after each new token."""
    idx = prompt
    for _ in range(new_tokens):
        idx = generate(model, idx, 1, context_length)
        yield idx


def take_turns(runs, device):
    """Advance every run by one token in turn, timing each step, until all are done: when the
    machine's load changes, it slows every run alike. Returns ({name: ids}, {name: seconds of
    each step}); a cached run's first step includes its prompt."""
    ids, times = {}, {name: [] for name in runs}
    running = dict(runs)
    while running:
        for name, steps in list(running.items()):
            started = clock(device)
            try:
                ids[name] = next(steps)
            except StopIteration:
                del running[name]
                continue
            times[name].append(clock(device) - started)
    return ids, times


def clock(device):
    """Seconds, after the GPU has finished what was queued (its work runs behind the Python code)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


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
    parser.add_argument("--smoke", action="store_true", help="a tiny model and 20 tokens: checks the code runs")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype)
    cfg = dict(GPT_CONFIG_124M, drop_rate=0.0)
    if args.smoke:
        cfg.update(vocab_size=500, context_length=64, emb_dim=32, n_heads=4, n_layers=2)
        args.prompt_tokens, args.new_tokens = 5, 20
    assert args.prompt_tokens + args.new_tokens <= cfg["context_length"], "prompt + new tokens must fit the context"

    torch.manual_seed(123)
    model = GPTModel(cfg).to(device=device, dtype=dtype).eval()
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    shape = "a tiny GPT (smoke test)" if args.smoke else "GPT-2 124M shape"
    print(f"{shape} ({sum(p.numel() for p in model.parameters()):,} parameters), {args.dtype}, on {where}; "
          f"torch {torch.__version__}")
    print(f"prompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens, greedy, batch {args.batch}")

    figures, all_same = [], True
    for batch in args.batch:
        prompt = torch.randint(0, cfg["vocab_size"], (batch, args.prompt_tokens), device=device)
        cached = cached_models(model, cfg, batch, device)
        generate(model, prompt, 2, cfg["context_length"])  # warm up kernels and allocator
        for cached_model in cached.values():
            generate_greedy_cached(cached_model, prompt, 2)
        steps = {"no cache": steps_without_cache(model, prompt, args.new_tokens, cfg["context_length"])}
        steps.update({name: greedy_cached_steps(cached_model, prompt, args.new_tokens)
                      for name, cached_model in cached.items()})
        ids, times = take_turns(steps, device)
        runs = {}
        for name in steps:
            same = torch.equal(ids[name], ids["no cache"])
            runs[name] = (times[name], same)
            if not same:
                first = int((ids[name] != ids["no cache"]).any(dim=0).nonzero()[0])
                print(f"  {name}: the ids differ from no cache's from position {first} on")
        del cached, steps
        figures.extend(report(batch, runs, args))
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
