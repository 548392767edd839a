"""Chapter 08's speed and memory figures: fine-tuning chapter 07's way and with LoRA, and merging.

    python benchmarks/lora_bench.py [--steps 40] [--rank 16] [--threads 2] [--device cpu|cuda]

On the small model of the offline notebooks (4 blocks, emb_dim 128, context 128, random
weights: speed does not depend on the values) with a 2-class head, batches of 8 messages of
120 tokens, it times --steps training steps of each way (chapter 07: head, last block and final
norm trained; LoRA: every linear layer wrapped at --rank, everything else frozen), prints the
trainable parameters and AdamW's memory for them (gradient and two moments in float32), the
same counts for GPT-2 small's shape (built on the meta device), and the forward time of a batch
with the LoRA branches, merged, and without LoRA. It asserts only that merging keeps the
outputs (to 1e-4).
"""
import argparse
import copy
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.pretrain import count_parameters, count_trainable  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402
from grader.reference.ch07_classification import add_classification_head, calc_loss_batch_cls  # noqa: E402
from grader.reference.ch08_lora import LinearWithLoRA, replace_linear_with_lora  # noqa: E402

SMALL = {"vocab_size": 50257, "context_length": 128, "emb_dim": 128, "n_heads": 4, "n_layers": 4,
         "drop_rate": 0.0, "qkv_bias": False}
GPT2_SMALL = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
              "drop_rate": 0.0, "qkv_bias": True}


def classifier(cfg, lora_rank=None):
    model = GPTModel(cfg)
    add_classification_head(model, num_classes=2, emb_dim=cfg["emb_dim"])
    if lora_rank:
        for param in model.parameters():
            param.requires_grad = False
        replace_linear_with_lora(model, rank=lora_rank, alpha=lora_rank)
    return model


def mib(count):
    return 3 * 4 * count / 2 ** 20  # gradient + AdamW's two moments, float32


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def seconds_per_step(model, batches, device):
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=5e-4)
    model.train()
    for i, (x, y) in enumerate(batches):
        if i == 1:  # the first step pays one-time costs
            sync(device)
            started = time.perf_counter()
        optimizer.zero_grad()
        calc_loss_batch_cls(x, y, model, device).backward()
        optimizer.step()
    sync(device)
    return (time.perf_counter() - started) / (len(batches) - 1)


def merge_lora(module):
    for name, child in module.named_children():
        if isinstance(child, LinearWithLoRA):
            with torch.no_grad():
                child.linear.weight += child.lora.alpha * (child.lora.A @ child.lora.B).T
            setattr(module, name, child.linear)
        else:
            merge_lora(child)


def seconds_per_forward(model, x, device, repeats=10):
    model.eval()
    with torch.no_grad():
        model(x)
        sync(device)
        started = time.perf_counter()
        for _ in range(repeats):
            model(x)
        sync(device)
    return (time.perf_counter() - started) / repeats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(123)
    batches = [(torch.randint(0, 50257, (8, 120)), torch.randint(0, 2, (8,))) for _ in range(args.steps + 1)]

    torch.manual_seed(123)
    partial = classifier(SMALL).to(device)
    torch.manual_seed(123)
    lora = classifier(SMALL, args.rank).to(device)
    with torch.device("meta"):
        gpt2_partial, gpt2_lora = classifier(GPT2_SMALL), classifier(GPT2_SMALL, args.rank)
    gpt2_total = count_parameters(gpt2_lora) - count_trainable(gpt2_lora)

    print(f"device {device}, {torch.get_num_threads()} threads, torch {torch.__version__}; batches of 8 x 120 "
          f"tokens, {args.steps} timed steps")
    print(f"{'':<34}{'trainable':>12}{'AdamW MiB':>11}{'GPT-2 small':>14}{'AdamW MiB':>11}{'s per step':>12}")
    rows = [("everything (full fine-tuning)", count_parameters(partial), gpt2_total, None),
            ("chapter 07: head, last block, norm", count_trainable(partial), count_trainable(gpt2_partial),
             seconds_per_step(partial, batches, device)),
            (f"LoRA rank {args.rank}", count_trainable(lora), count_trainable(gpt2_lora),
             seconds_per_step(lora, batches, device))]
    for name, count, gpt2, step in rows:
        timing = f"{step:>12.3f}" if step is not None else f"{'-':>12}"
        print(f"{name:<34}{count:>12,}{mib(count):>11.1f}{gpt2:>14,}{mib(gpt2):>11.1f}{timing}")

    x = batches[0][0].to(device)
    merged = copy.deepcopy(lora)
    merge_lora(merged)
    lora.eval()
    merged.eval()
    with torch.no_grad():
        difference = (merged(x) - lora(x)).abs().max().item()
    assert difference < 1e-4, difference
    print(f"merged vs LoRA logits: largest difference {difference:.1e}")
    for name, model in (("forward with LoRA branches", lora), ("forward merged", merged),
                        ("forward without LoRA", partial)):
        print(f"{name:<34}{1000 * seconds_per_forward(model, x, device):8.1f} ms per batch")


if __name__ == "__main__":
    main()
