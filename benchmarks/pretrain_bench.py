"""How fast chapter 05's pretraining runs: the notebook's CPU run against the book's.

    python benchmarks/pretrain_bench.py [--book-steps 3] [--full-book-run] [--out-json FILE]

Measures, on this machine, in one run, with the reference solutions (grader/reference):
  1. the notebook's run (gptcourse.pretrain.cpu_run(): train_model with warmup, cosine decay
     and clipping): training tokens per second, and the wall time until the training loss
     over the whole training loader (measured after every epoch) first drops below 1;
  2. the book's run (GPT_CONFIG_124M with context 256, AdamW lr 4e-4, weight decay 0.1,
     batch 2, 10 epochs, evaluation every 5 steps over 5 batches, a 50-token sample after
     every epoch): by default only --book-steps optimizer steps, one evaluation and one sample
     are timed (after one untimed warm-up step), and the whole run is extrapolated from them:
         steps x step time + evaluations x evaluation time + epochs x sample time.
     --full-book-run trains all 10 epochs instead (about 11 minutes on 2 cores) and also
     prints its final training and validation losses (the book: below 1 and below 7).
It prints the figures and the ratio book / notebook; it asserts nothing.
"""
import argparse
import contextlib
import io
import json
import math
import os
import platform
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import torch  # noqa: E402

from gptcourse.data import read_text  # noqa: E402
from gptcourse.pretrain import cpu_run, make_optimizer  # noqa: E402
from grader.reference.ch01_text_data import create_dataloader_v1  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402
from grader.reference.ch05_pretraining import (GPT_CONFIG_124M, calc_loss_batch, calc_loss_loader,  # noqa: E402
                                               evaluate_model, generate_and_print_sample, lr_at_step,
                                               tokenizer, train_model_simple)

BOOK = {"lr": 4e-4, "weight_decay": 0.1, "batch_size": 2, "num_epochs": 10, "eval_freq": 5, "eval_iter": 5}


def loaders(text, context_length, batch_size):
    split = int(0.9 * len(text))
    torch.manual_seed(123)
    train = create_dataloader_v1(text[:split], batch_size=batch_size, max_length=context_length,
                                 stride=context_length, drop_last=True, shuffle=True)
    val = create_dataloader_v1(text[split:], batch_size=batch_size, max_length=context_length,
                               stride=context_length, drop_last=False, shuffle=False)
    return train, val


def notebook_run(text):
    """The notebook's run, step by step as train_model takes them, with the full training loss
    after every epoch; returns its figures."""
    run = cpu_run()
    train_loader, val_loader = loaders(text, run.cfg["context_length"], run.batch_size)
    torch.manual_seed(123)
    model = GPTModel(run.cfg)
    optimizer = make_optimizer(model, run)
    total_steps = len(train_loader) * run.num_epochs
    warmup = run.warmup_steps(len(train_loader))
    train_seconds, tokens, step, started, reached = 0.0, 0, -1, time.perf_counter(), None
    losses = []
    for epoch in range(run.num_epochs):
        model.train()
        begin = time.perf_counter()
        for input_batch, target_batch in train_loader:
            step += 1
            for group in optimizer.param_groups:
                group["lr"] = lr_at_step(step, total_steps, warmup, run.peak_lr, run.initial_lr, run.min_lr)
            optimizer.zero_grad()
            calc_loss_batch(input_batch, target_batch, model, "cpu").backward()
            if step >= warmup:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            tokens += input_batch.numel()
        train_seconds += time.perf_counter() - begin
        model.eval()
        with torch.no_grad():
            loss = calc_loss_loader(train_loader, model, "cpu")
        losses.append(loss)
        print(f"  notebook run, epoch {epoch + 1}: step {step + 1}, training loss {loss:.3f}, "
              f"{time.perf_counter() - started:.0f} s", flush=True)
        if loss < 1 and reached is None:
            reached = {"seconds": time.perf_counter() - started, "train_seconds": train_seconds,
                       "steps": step + 1, "epoch": epoch + 1}
            break
    with torch.no_grad():
        val_loss = calc_loss_loader(val_loader, model, "cpu")
    return {"config": run.describe(), "tokens_per_second": tokens / train_seconds, "reached_below_1": reached,
            "train_losses_per_epoch": losses, "val_loss_at_end": val_loss}


def book_run(text, steps, full):
    """Time the book's run: a few steps, one evaluation and one sample, extrapolated (or all of it)."""
    cfg = dict(GPT_CONFIG_124M, context_length=256)
    train_loader, val_loader = loaders(text, 256, BOOK["batch_size"])
    torch.manual_seed(123)
    model = GPTModel(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=BOOK["lr"], weight_decay=BOOK["weight_decay"])
    total_steps = len(train_loader) * BOOK["num_epochs"]
    evaluations = math.ceil(total_steps / BOOK["eval_freq"])
    if full:
        started = time.perf_counter()
        train_losses, val_losses, _ = train_model_simple(
            model, train_loader, val_loader, optimizer, "cpu", BOOK["num_epochs"], BOOK["eval_freq"],
            BOOK["eval_iter"], "Every effort moves you", tokenizer)
        seconds = time.perf_counter() - started
        return {"measured": "the whole run", "seconds": seconds, "steps": total_steps,
                "final_train_loss": train_losses[-1], "final_val_loss": val_losses[-1]}
    batches = iter(train_loader)

    def one_step():
        input_batch, target_batch = next(batches)
        optimizer.zero_grad()
        calc_loss_batch(input_batch, target_batch, model, "cpu").backward()
        optimizer.step()

    model.train()
    one_step()  # warm-up, not timed
    begin = time.perf_counter()
    for _ in range(steps):
        one_step()
    step_seconds = (time.perf_counter() - begin) / steps
    begin = time.perf_counter()
    evaluate_model(model, train_loader, val_loader, "cpu", BOOK["eval_iter"])
    eval_seconds = time.perf_counter() - begin
    begin = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        generate_and_print_sample(model, tokenizer, "cpu", "Every effort moves you")
    sample_seconds = time.perf_counter() - begin
    seconds = total_steps * step_seconds + evaluations * eval_seconds + BOOK["num_epochs"] * sample_seconds
    return {"measured": f"{steps} steps, 1 evaluation, 1 sample; extrapolated", "seconds": seconds,
            "steps": total_steps, "step_seconds": step_seconds, "tokens_per_second": 2 * 256 / step_seconds,
            "evaluation_seconds": eval_seconds, "evaluations": evaluations, "sample_seconds": sample_seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book-steps", type=int, default=3, help="timed steps of the book's run")
    parser.add_argument("--full-book-run", action="store_true", help="train the book's run to the end")
    parser.add_argument("--out-json", help="also write the figures here")
    args = parser.parse_args()
    text = read_text("the-verdict")
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, " \
              f"{torch.get_num_threads()} threads"
    print(f"machine: {machine}")
    notebook = notebook_run(text)
    book = book_run(text, args.book_steps, args.full_book_run)
    reached = notebook["reached_below_1"]
    print(f"\nnotebook run ({notebook['config'].splitlines()[0]})")
    print(f"  training throughput: {notebook['tokens_per_second']:.0f} tokens/s")
    if reached:
        print(f"  training loss below 1 after {reached['steps']} steps (epoch {reached['epoch']}): "
              f"{reached['seconds']:.1f} s wall, of which {reached['train_seconds']:.1f} s training")
    else:
        print(f"  training loss never went below 1 (last: {notebook['train_losses_per_epoch'][-1]:.3f})")
    print(f"  validation loss at that point: {notebook['val_loss_at_end']:.2f}")
    print(f"book run (GPT_CONFIG_124M, context 256, batch 2, 10 epochs): {book['measured']}")
    if "step_seconds" in book:
        print(f"  {book['step_seconds']:.2f} s per step ({book['tokens_per_second']:.0f} tokens/s), "
              f"{book['evaluation_seconds']:.1f} s per evaluation x {book['evaluations']}, "
              f"{book['sample_seconds']:.1f} s per sample x {BOOK['num_epochs']}")
    else:
        print(f"  final training loss {book['final_train_loss']:.3f}, validation loss {book['final_val_loss']:.3f}")
    print(f"  {book['steps']} steps: {book['seconds'] / 60:.1f} min")
    if reached:
        print(f"ratio book / notebook (wall time to the end of the book's run vs to training loss < 1): "
              f"{book['seconds'] / reached['seconds']:.1f}x (target: at least 5x)")
    if args.out_json:
        with open(args.out_json, "w") as file:
            json.dump({"machine": machine, "notebook": notebook, "book": book}, file, indent=1)


if __name__ == "__main__":
    main()
