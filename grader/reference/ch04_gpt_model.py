"""Reference solutions of 04_gpt_model: GENERATED from solutions/04_gpt_model.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import torch
import torch.nn as nn

from gptcourse import check, get_device
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("04_gpt_model")

# The configuration of GPT-2 small ("124M").
GPT_CONFIG_124M = {
    "vocab_size": 50257,     # the GPT-2 BPE vocabulary
    "context_length": 1024,  # the longest input the model takes, in tokens
    "emb_dim": 768,          # features per token
    "n_heads": 12,           # attention heads per block
    "n_layers": 12,          # transformer blocks
    "drop_rate": 0.1,        # dropout rate
    "qkv_bias": False,       # no bias in the query, key and value projections
}


# %% carried over from an earlier chapter
from grader.reference.ch03_multihead_attention import MultiHeadAttention


# %% task 4.1: LayerNorm
class LayerNorm(nn.Module):
    """Layer normalization over the last dimension, with a learned scale and shift."""

    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        """x: (..., emb_dim) -> the same shape, each row normalized to mean 0 and variance 1."""
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # biased: divide by n, as GPT-2 does
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


# %% task 4.2: GELU
class GELU(nn.Module):
    """The GELU activation, in the tanh approximation that GPT-2 uses."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


# %% task 4.3: FeedForward
class FeedForward(nn.Module):
    """Expand each token's features 4x, apply GELU, project back."""

    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        """x: (batch, num_tokens, emb_dim) -> the same shape"""
        return self.layers(x)


# %% task 4.4: TransformerBlock
class TransformerBlock(nn.Module):
    """Pre-LayerNorm transformer block: attention and feed-forward, each with a shortcut."""

    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            dropout=cfg["drop_rate"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        """x: (batch, num_tokens, emb_dim) -> the same shape"""
        # Attention sub-block: normalize, attend, dropout, add the shortcut.
        shortcut = x
        x = self.norm1(x)
        x = self.att(x)
        x = self.drop_shortcut(x)
        x = x + shortcut

        # Feed-forward sub-block: the same pattern.
        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        return x + shortcut


# %% task 4.5: GPTModel
class GPTModel(nn.Module):
    """The GPT-2 architecture: embeddings, n_layers transformer blocks, final norm, output head."""

    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        """in_idx: (batch, num_tokens) token ids -> logits (batch, num_tokens, vocab_size)"""
        batch_size, num_tokens = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        # Positions on the ids' device, so that the model also runs on a GPU.
        pos_embeds = self.pos_emb(torch.arange(num_tokens, device=in_idx.device))
        x = self.drop_emb(tok_embeds + pos_embeds)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        return self.out_head(x)


# %% task 4.6: generate_text_simple
def generate_text_simple(model, idx, max_new_tokens, context_size):
    """Greedy decoding: append max_new_tokens token ids to idx (batch, num_tokens) and return it."""
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]  # the model sees at most context_size tokens
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]  # only the last position predicts the next token
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # (batch, 1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
