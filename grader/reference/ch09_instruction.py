"""Reference solutions of 09_instruction: GENERATED from solutions/09_instruction.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import json
import math

import tiktoken
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from gptcourse import check, get_device, get_encoding, show_text  # show_text: a long text broken between words
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("09_instruction")

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
from grader.reference.ch06_sampling import generate


# %% task 9.1: format_input
def format_input(entry):
    """The Alpaca prompt of an entry: the instruction, and the input when there is one."""
    instruction_text = (
        "Below is an instruction that describes a task. "
        "Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )
    # An empty input gets no section at all: the model never sees an empty "### Input:".
    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""
    return instruction_text + input_text


# %% task 9.2: custom_collate_fn
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    """Pad a batch of token-id lists to the longest entry plus one, shift it into inputs and
    targets, and set every padding token of the targets but the first to ignore_index."""
    batch_max_length = max(len(item) + 1 for item in batch)  # every entry gets one end-of-text token
    inputs_list, targets_list = [], []
    for item in batch:
        padded = list(item) + [pad_token_id] * (batch_max_length - len(item))  # a new list: item stays as it is
        inputs = torch.tensor(padded[:-1], dtype=torch.long)
        targets = torch.tensor(padded[1:], dtype=torch.long)

        # Keep the first padding token as a target (the model learns to stop); hide the rest.
        padding_positions = torch.nonzero(targets == pad_token_id).flatten()
        if padding_positions.numel() > 1:
            targets[padding_positions[1:]] = ignore_index

        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]
        inputs_list.append(inputs)
        targets_list.append(targets)
    return torch.stack(inputs_list).to(device), torch.stack(targets_list).to(device)
