"""Reference solutions of 06_sampling: GENERATED from solutions/06_sampling.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import tiktoken
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset  # what a pasted create_dataloader_v1 (chapter 01) uses

from gptcourse import check, get_device, get_encoding, show_text  # show_text: a long text broken between words
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("06_sampling")

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
from grader.reference.ch05_pretraining import lr_at_step, train_model


# %% task 6.1: softmax_with_temperature
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    scaled_logits = logits / temperature
    return torch.softmax(scaled_logits, dim=-1)  # over the vocabulary, the last dimension


# %% task 6.2: top_k_logits
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_values, _ = torch.topk(logits, k, dim=-1)
    kth_largest = top_values[..., -1:]  # (..., 1): the k-th largest logit of each row
    return logits.masked_fill(logits < kth_largest, float("-inf"))


# %% task 6.3: top_p_logits
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    # The probability mass of the tokens ranked above each token. Once that mass reaches p, the
    # set is complete without this token.
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = mass_before >= p
    # The most probable token has mass 0 before it, which "reaches" p = 0: keep it explicitly,
    # so that every row keeps at least one token.
    drop_sorted[..., 0] = False
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))


# %% task 6.4: generate
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]  # the model sees at most context_size tokens
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]  # the last position predicts the next token

        if temperature == 0.0:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        else:
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            probs = softmax_with_temperature(logits, temperature)
            idx_next = torch.multinomial(probs, num_samples=1)

        idx = torch.cat((idx, idx_next), dim=1)
        if eos_id is not None:
            finished |= idx_next.squeeze(1) == eos_id
            if bool(finished.all()):
                break
    return idx


# %% task 6.5: KVCacheMultiHeadAttention
class KVCacheMultiHeadAttention(nn.Module):
    """MultiHeadAttention (Task 3.2) that can remember the keys and values of the tokens it has seen."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.cache_k = None  # (batch, num_heads, tokens seen, head_dim) once tokens come in with use_cache=True
        self.cache_v = None

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None

    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        queries = self._split_heads(self.W_query(x))
        keys = self._split_heads(self.W_key(x))
        values = self._split_heads(self.W_value(x))

        start = 0  # the position of this chunk's first token in the whole sequence
        if use_cache:
            if self.cache_k is not None:
                start = self.cache_k.shape[2]
            if start + num_tokens > self.context_length:
                raise ValueError(f"the cache holds {start} tokens and {num_tokens} more would pass the "
                                 f"context_length of {self.context_length}: call reset_cache() first")
            if self.cache_k is not None:
                keys = torch.cat((self.cache_k, keys), dim=2)
                values = torch.cat((self.cache_v, values), dim=2)
            self.cache_k, self.cache_v = keys, values

        # Queries sit at positions start .. start + num_tokens - 1, keys at 0 .. start + num_tokens - 1:
        # the mask's rows for the queries, its columns for the keys.
        mask_bool = self.mask.bool()[start:start + num_tokens, :start + num_tokens]
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(mask_bool, float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)

    def _split_heads(self, t):
        b, num_tokens, _ = t.shape
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
