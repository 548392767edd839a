"""Reference solutions of 01_text_data: GENERATED from solutions/01_text_data.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import re

import tiktoken
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from gptcourse import check, get_encoding, show_text  # show_text: a long text broken between words
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("01_text_data")

# The split of the simple tokenizer: punctuation, double dashes and whitespace, kept as
# separate pieces by the capturing group.
TOKEN_PATTERN = r'([,.:;?_!"()\']|--|\s)'

# Makes tiktoken's "gpt2" encoding work offline (the course ships its two files).
_ = get_encoding()


# %% task 1.1: SimpleTokenizerV2
class SimpleTokenizerV2:
    """Text <-> token ids with a fixed vocabulary; unknown words become <|unk|>."""

    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        pieces = re.split(TOKEN_PATTERN, text)
        tokens = [piece.strip() for piece in pieces if piece.strip()]
        unknown = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(token, unknown) for token in tokens]

    def decode(self, ids):
        text = " ".join(self.int_to_str[i] for i in ids)
        # No space before punctuation: "Hello , world ." -> "Hello, world."
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)


# %% task 1.2: build_vocab
def build_vocab(text):
    """Every distinct token of `text` (split as in Task 1.1), sorted, then the two special
    tokens <|endoftext|> and <|unk|>; returns {token: id}."""
    pieces = re.split(TOKEN_PATTERN, text)
    tokens = sorted({piece.strip() for piece in pieces if piece.strip()})
    tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: token_id for token_id, token in enumerate(tokens)}


# %% task 1.3: GPTDatasetV1
class GPTDatasetV1(Dataset):
    """Sliding windows over the token ids of `txt`: inputs and the same windows shifted by one."""

    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        # A window starting at i needs max_length inputs and one more token for the last target.
        for i in range(0, len(token_ids) - max_length, stride):
            self.input_ids.append(torch.tensor(token_ids[i:i + max_length]))
            self.target_ids.append(torch.tensor(token_ids[i + 1:i + max_length + 1]))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


# %% task 1.4: create_dataloader_v1
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    """A DataLoader of (inputs, targets) batches over the GPT-2 tokens of `txt`."""
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)


# %% task 1.5: embed
def embed(token_ids, tok_emb, pos_emb):
    """Token embeddings plus the embeddings of positions 0..num_tokens-1.

    token_ids: (batch, num_tokens) int64; tok_emb, pos_emb: nn.Embedding layers.
    returns (batch, num_tokens, emb_dim)
    """
    num_tokens = token_ids.shape[-1]
    # Create the positions where the ids are, so the function works on a GPU too.
    positions = torch.arange(num_tokens, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)
