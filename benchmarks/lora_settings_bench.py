"""Chapter 08's LoRA settings for the small model: each against chapter 07's fine-tuning.

    python benchmarks/lora_settings_bench.py [--settings 4,2 4,1 16,16] [--lr 5e-4] [--threads 2]

As chapter 08 runs offline: chapter 05's small GPT pretrained on The Verdict
(gptcourse.finetune.pretrained_base, with the reference package's functions), chapter 07's spam
splits and loaders, and chapter 07's fine-tuning run for the small model (5 epochs). It
fine-tunes that model chapter 07's way (new head, last block and final norm trained), then with
LoRA at each rank,alpha of --settings (everything else frozen, AdamW at --lr), every run from
the same pretrained weights and seed, and prints one line per run: trained parameters, training
and validation accuracy after each epoch, test accuracy, seconds. gptcourse.finetune's
pick_lora_settings says what it showed and which settings chapter 08 takes.
"""
import argparse
import copy
import csv
import json
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO]

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from gptcourse import get_encoding  # noqa: E402
from gptcourse.data import fetch  # noqa: E402
from gptcourse.finetune import pick_finetune_run, pretrained_base, spam_loaders, train_classifier  # noqa: E402
from gptcourse.pretrain import count_trainable  # noqa: E402
from grader.reference.ch01_text_data import create_dataloader_v1  # noqa: E402
from grader.reference.ch04_gpt_model import GPTModel  # noqa: E402
from grader.reference.ch05_pretraining import load_weights_into_gpt, train_model  # noqa: E402
from grader.reference.ch07_classification import (SpamDataset, add_classification_head,  # noqa: E402
                                                  calc_accuracy_loader, calc_loss_batch_cls, create_balanced_dataset,
                                                  random_split)
from grader.reference.ch08_lora import replace_linear_with_lora  # noqa: E402


def spam_splits(folder):
    """Chapter 07's balanced and split messages, written as train.csv, validation.csv, test.csv."""
    df = pd.read_csv(fetch("sms-spam"), sep="\t", header=None, names=["Label", "Text"], quoting=csv.QUOTE_NONE)
    balanced = create_balanced_dataset(df)
    balanced["Label"] = balanced["Label"].map({"ham": 0, "spam": 1})
    for name, part in zip(("train", "validation", "test"), random_split(balanced, 0.7, 0.1)):
        part.to_csv(os.path.join(folder, f"{name}.csv"), index=None)


def fine_tune(base_model, cfg, loaders, run, lora=None):
    """One run from the pretrained weights: chapter 07's way, or LoRA at (rank, alpha)."""
    train_loader, val_loader, test_loader = loaders
    torch.manual_seed(123)
    model = copy.deepcopy(base_model)
    add_classification_head(model, num_classes=2, emb_dim=cfg["emb_dim"])
    if lora is not None:
        for param in model.parameters():
            param.requires_grad = False
        replace_linear_with_lora(model, rank=lora[0], alpha=lora[1])
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=run.lr,
                                  weight_decay=run.weight_decay)
    started = time.perf_counter()
    _, _, train_accs, val_accs, _, _ = train_classifier(model, train_loader, val_loader, optimizer, "cpu", run,
                                                        calc_loss_batch_cls, calc_accuracy_loader)
    test = calc_accuracy_loader(test_loader, model, "cpu")
    return {"run": "chapter 07's way" if lora is None else f"LoRA rank {lora[0]}, alpha {lora[1]:g}, lr {run.lr:g}",
            "trained": count_trainable(model), "train": [round(a, 3) for a in train_accs],
            "validation": [round(a, 3) for a in val_accs], "test": round(test, 3),
            "seconds": round(time.perf_counter() - started)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", nargs="+", default=["4,2", "4,1", "4,4", "4,16", "16,16"], metavar="RANK,ALPHA")
    parser.add_argument("--lr", type=float, default=5e-4, help="LoRA's AdamW rate (chapter 07's is 5e-4)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if not os.environ.get("GPTCOURSE_DATA_MIRROR"):  # offline, as the notebooks without GPT-2's weights
        os.environ["GPTCOURSE_DATA_MIRROR"] = os.path.abspath(os.path.join(REPO, "..", "shared", "data"))
    tokenizer = get_encoding()
    with tempfile.TemporaryDirectory() as folder:
        spam_splits(folder)
        base_model, cfg, base = pretrained_base("cpu", tokenizer, GPTModel, load_weights_into_gpt, train_model,
                                                create_dataloader_v1)
        assert base == "small", "GPT-2's weights were found: this compares the small model's settings"
        *loaders, _ = spam_loaders(SpamDataset, folder, tokenizer, cfg["context_length"])
    run = pick_finetune_run("cpu", base)
    print(f"{run.describe()}\n{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f}", flush=True)
    print(json.dumps(fine_tune(base_model, cfg, loaders, run)), flush=True)
    lora_run = copy.deepcopy(run)
    lora_run.lr = args.lr
    for setting in args.settings:
        rank, alpha = setting.split(",")
        print(json.dumps(fine_tune(base_model, cfg, loaders, lora_run, lora=(int(rank), float(alpha)))), flush=True)


if __name__ == "__main__":
    main()
