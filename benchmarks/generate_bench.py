"""Greedy generation with and without a key-value cache, on a model of GPT-2 124M's shape.

    python benchmarks/generate_bench.py [--new-tokens 300] [--prompt-tokens 20] [--device cpu|cuda]
                                        [--threads 2] [--dtype float32|bfloat16]

Builds the reference GPTModel with GPT_CONFIG_124M's shape (context 1024, no dropout, random
weights: speed does not depend on what the weights are), then generates --new-tokens tokens
after the same prompt twice: with chapter 06's `generate` (temperature 0: greedy; the whole
sequence goes through the model at every step) and with the cache (gptcourse.kvcache: the
prompt once, then one token per call, through the reference KVCacheMultiHeadAttention). It
checks that both runs produce the same ids, and prints the time of each, tokens per second,
the speed-up, and the time per token at a few positions. On CUDA it synchronises before
every clock read. It asserts only that the ids agree.
"""
import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.kvcache import StepTimer, add_kv_cache, generate_greedy_cached  # noqa: E402
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=300)
    parser.add_argument("--prompt-tokens", type=int, default=20)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype)
    cfg = dict(GPT_CONFIG_124M, drop_rate=0.0)
    assert args.prompt_tokens + args.new_tokens <= cfg["context_length"], "prompt + new tokens must fit the context"

    torch.manual_seed(123)
    model = GPTModel(cfg).to(device=device, dtype=dtype).eval()
    prompt = torch.randint(0, cfg["vocab_size"], (1, args.prompt_tokens), device=device)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(f"GPT-2 124M shape ({sum(p.numel() for p in model.parameters()):,} parameters), {args.dtype}, on {where}; "
          f"torch {torch.__version__}")
    print(f"prompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens, greedy")

    generate(model, prompt, 2, cfg["context_length"])  # warm up kernels and allocator
    plain_ids, plain_times = timed_greedy_without_cache(model, prompt, args.new_tokens, device)
    cached = add_kv_cache(model, cfg, KVCacheMultiHeadAttention).eval()
    timed_greedy_with_cache(cached, prompt, 2, device)  # warm up
    cached_ids, cached_times = timed_greedy_with_cache(cached, prompt, args.new_tokens, device)

    same = torch.equal(plain_ids, cached_ids)
    plain, fast = sum(plain_times), sum(cached_times)
    print(f"without cache: {plain:8.2f} s  {args.new_tokens / plain:8.1f} tokens/s")
    print(f"with cache:    {fast:8.2f} s  {args.new_tokens / fast:8.1f} tokens/s  (prompt included)")
    print(f"speed-up: {plain / fast:.1f}x; identical ids: {same}")
    print("time per token (ms) at position:  " + "  ".join(
        f"{args.prompt_tokens + i}: {1e3 * plain_times[i]:.0f} / {1e3 * cached_times[i]:.0f}"
        for i in sorted({1, args.new_tokens // 4, args.new_tokens // 2, args.new_tokens - 2})) + "  (without / with)")
    if not same:
        first = int((plain_ids != cached_ids).nonzero()[0, 1])
        raise SystemExit(f"the ids differ from position {first} on")


if __name__ == "__main__":
    main()
