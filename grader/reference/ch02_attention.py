"""Reference solutions of 02_attention: GENERATED from solutions/02_attention.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import torch
import torch.nn as nn

from gptcourse import check, get_device
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("02_attention")

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


# %% task 2.1: simple_self_attention
def simple_self_attention(inputs):
    """Attention with no trainable weights: every token attends to every token.

    inputs: (num_tokens, d) or (batch, num_tokens, d)
    returns (attn_weights, context_vecs) of shapes (..., num_tokens, num_tokens)
    and (..., num_tokens, d)
    """
    # Similarity of every query token with every key token: (..., T, T)
    attn_scores = inputs @ inputs.transpose(-2, -1)
    # Each row becomes a probability distribution over the tokens.
    attn_weights = torch.softmax(attn_scores, dim=-1)
    # Each context vector is a weighted average of all input vectors.
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs


# %% task 2.2: SelfAttention_v1
class SelfAttention_v1(nn.Module):
    """Scaled dot-product self-attention with raw parameter matrices."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        """x: (num_tokens, d_in) -> context vectors (num_tokens, d_out)"""
        queries = x @ self.W_query
        keys = x @ self.W_key
        values = x @ self.W_value
        attn_scores = queries @ keys.transpose(-2, -1)
        # Scale by sqrt(d_out) so the softmax does not saturate as d_out grows.
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


# %% task 2.3: SelfAttention_v2
class SelfAttention_v2(nn.Module):
    """Scaled dot-product self-attention with nn.Linear projections."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        """x: (num_tokens, d_in) -> context vectors (num_tokens, d_out)"""
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


# %% task 2.4: causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    """Causal attention weights from raw attention scores.

    attn_scores: (..., num_tokens, num_tokens), one row per query, one column per key
    d_k: the key dimension; the scores are divided by sqrt(d_k)
    returns the weights, same shape: softmax over the last dim, exactly 0 above the diagonal
    """
    num_tokens = attn_scores.shape[-1]
    # True above the diagonal: the positions a token must not see (its future).
    future = torch.triu(
        torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=attn_scores.device),
        diagonal=1,
    )
    # masked_fill (not masked_fill_) returns a new tensor: the caller's scores stay untouched.
    masked = attn_scores.masked_fill(future, float("-inf"))
    return torch.softmax(masked / d_k ** 0.5, dim=-1)


# %% task 2.5: CausalAttention
class CausalAttention(nn.Module):
    """Single-head causal self-attention for batched input, with dropout on the weights."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        # A buffer moves with .to(device) and is saved in the state_dict, but is not trained.
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        """x: (batch, num_tokens, d_in) -> context vectors (batch, num_tokens, d_out)"""
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        # Only the first num_tokens rows and columns of the mask apply to a shorter input.
        attn_scores = attn_scores.masked_fill(
            self.mask.bool()[:num_tokens, :num_tokens], float("-inf")
        )
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values
