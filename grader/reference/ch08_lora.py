"""Reference solutions of 08_lora: GENERATED from solutions/08_lora.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import pandas as pd
import tiktoken
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from gptcourse import check, get_device, get_encoding
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("08_lora")

# The GPT-2 tokenizer (works offline: the course ships its two files).
tokenizer = get_encoding()


# %% carried over from an earlier chapter
from grader.reference.ch01_text_data import create_dataloader_v1


# %% carried over from an earlier chapter
from grader.reference.ch03_multihead_attention import MultiHeadAttention


# %% carried over from an earlier chapter
from grader.reference.ch04_gpt_model import GPTModel


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import text_to_token_ids, token_ids_to_text


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import load_weights_into_gpt


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import lr_at_step, train_model


# %% carried over from an earlier chapter
from grader.reference.ch07_classification import create_balanced_dataset, random_split


# %% carried over from an earlier chapter
from grader.reference.ch07_classification import SpamDataset


# %% carried over from an earlier chapter
from grader.reference.ch07_classification import add_classification_head


# %% carried over from an earlier chapter
from grader.reference.ch07_classification import calc_accuracy_loader, calc_loss_batch_cls


# %% task 8.1: LoRALayer
class LoRALayer(nn.Module):
    """The low-rank update alpha * (x @ A @ B): A (in_dim, rank) random, B (rank, out_dim) zeros."""

    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))  # as nn.Linear initialises its weights
        self.B = nn.Parameter(torch.zeros(rank, out_dim))  # zero: the update starts at exactly 0
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)


# %% task 8.2: LinearWithLoRA
class LinearWithLoRA(nn.Module):
    """An nn.Linear plus a LoRA update: linear(x) + lora(x)."""

    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear  # the pretrained layer itself, not a copy
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)


# %% task 8.3: replace_linear_with_lora
def replace_linear_with_lora(model, rank, alpha):
    """Wrap every nn.Linear inside model, at any depth, in a LinearWithLoRA (in place)."""
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)  # look inside, one level down
