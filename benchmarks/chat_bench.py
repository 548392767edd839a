"""How quickly the chat panel (gptcourse.chat) answers: time to the first token and tokens per
second on one CPU core, for chapter 05's small model and for GPT-2 small's shape, with and
without chapter 06's key-value cache.

    python benchmarks/chat_bench.py [--threads 1] [--new-tokens 40] [--runs 3] [--json OUT]

Each model has random weights (the speed does not depend on them; GPT-2 small's real weights
are not needed). The panel's own path is timed: `Conversation.answer`, which calls the course's
reference `generate` (Task 6.4) once per token, through `CachedForGenerate` and the reference
`KVCacheMultiHeadAttention` (Task 6.5) for the cached rows. The prompt is 20 tokens, greedy
decoding, so every run makes the same tokens; each figure is the median of --runs answers. The
goal (issue: talk to your own model): the first token under 1 s for the small model.
"""
import argparse
import copy
import json
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse import get_encoding  # noqa: E402
from gptcourse.chat import Conversation, Settings  # noqa: E402
from gptcourse.kvcache import add_kv_cache  # noqa: E402
from gptcourse.pretrain import cpu_run  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402
from grader.reference.ch06_sampling import KVCacheMultiHeadAttention, generate  # noqa: E402

GPT2_SMALL = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
              "drop_rate": 0.0, "qkv_bias": False}
PROMPT = ("Every effort moves you forward, and the story of the painter who gave up his art "
          "begins in a quiet")


def measure(name, cfg, tokenizer, new_tokens, runs):
    torch.manual_seed(0)
    model = GPTModel(cfg).eval()
    cached = add_kv_cache(copy.deepcopy(model), cfg, KVCacheMultiHeadAttention).eval()
    rows = []
    for label, options in (("without the cache", {}), ("with the cache", {"cached_model": cached})):
        chat = Conversation(name, model, tokenizer, {"generate": generate}, cfg["context_length"], **options)
        answers = [chat.answer(PROMPT, Settings(temperature=0.0, max_new_tokens=new_tokens)) for _ in range(runs)]
        rows.append({"model": name, "path": label, "new_tokens": len(answers[0].token_ids),
                     "first_token_s": round(statistics.median(a.seconds_to_first_token for a in answers), 3),
                     "tokens_per_second": round(statistics.median(a.tokens_per_second for a in answers), 1)})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for torch (default 1: one core)")
    parser.add_argument("--new-tokens", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    tokenizer = get_encoding()
    print(f"prompt of {len(tokenizer.encode(PROMPT))} tokens, {args.new_tokens} new tokens, greedy; "
          f"torch {torch.__version__} on {args.threads} CPU thread(s); median of {args.runs} answers")
    rows = measure("chapter 05's small model", cpu_run().cfg, tokenizer, args.new_tokens, args.runs)
    rows += measure("GPT-2 small's shape", GPT2_SMALL, tokenizer, args.new_tokens, args.runs)
    for row in rows:
        print(f"{row['model']:<26} {row['path']:<18} first token {row['first_token_s']:6.3f} s   "
              f"{row['tokens_per_second']:6.1f} tokens/s")
    small_first = max(r["first_token_s"] for r in rows if r["model"].startswith("chapter 05"))
    print(f"the goal, the small model's first token under 1 s: {'met' if small_first < 1 else 'missed'} "
          f"({small_first:.3f} s at most)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"threads": args.threads, "new_tokens": args.new_tokens, "rows": rows}, f, indent=1)
    return 0 if small_first < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
