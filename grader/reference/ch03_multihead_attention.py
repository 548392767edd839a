"""Reference solutions of 03_multihead_attention: GENERATED from solutions/03_multihead_attention.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import torch
import torch.nn as nn

from gptcourse import check, get_device, show_text  # show_text: a long text broken between words
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("03_multihead_attention")

# Six made-up 3-d "embeddings", one per token of "Your journey starts with one step".
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your     x^(1)
     [0.55, 0.87, 0.66],  # journey  x^(2)
     [0.57, 0.85, 0.64],  # starts   x^(3)
     [0.22, 0.58, 0.33],  # with     x^(4)
     [0.77, 0.25, 0.10],  # one      x^(5)
     [0.05, 0.80, 0.55]]  # step     x^(6)
)
tokens = ["Your", "journey", "starts", "with", "one", "step"]

batch = torch.stack((inputs, inputs), dim=0)  # (B, T, d_in) = (2, 6, 3)


# %% carried over from an earlier chapter
from grader.reference.ch02_attention import CausalAttention


# %% task 3.1: MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads independent CausalAttention heads whose outputs are concatenated."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        """x: (batch, num_tokens, d_in) -> (batch, num_tokens, num_heads * d_out)"""
        return torch.cat([head(x) for head in self.heads], dim=-1)


# %% task 3.2: MultiHeadAttention
class MultiHeadAttention(nn.Module):
    """Causal multi-head self-attention: all heads computed at once, then an output projection."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        """x: (batch, num_tokens, d_in) -> (batch, num_tokens, d_out)"""
        b, num_tokens, d_in = x.shape
        # (b, T, d_out) -> (b, T, num_heads, head_dim) -> (b, num_heads, T, head_dim)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)
        mask = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores = attn_scores.masked_fill(mask, float("-inf"))
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # (b, num_heads, T, head_dim) -> (b, T, num_heads, head_dim) -> (b, T, d_out)
        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)
