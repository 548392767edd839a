"""Generation with a key-value cache, for any GPTModel of the course's shape.

Chapter 06 builds `KVCacheMultiHeadAttention`: attention that remembers the keys and values of
the tokens it has seen. A whole GPT needs one more change to use it: a chunk of new tokens
must get the positions that follow the ones already seen, not positions 0, 1, 2, ... again.
`add_kv_cache` makes both changes to a GPTModel without rewriting its forward pass:

- every block's `att` becomes the cache-keeping attention (with the same weights), called
  with `use_cache=True`;
- `pos_emb` is wrapped so that the positions the model asks for are shifted by the number of
  tokens already in the cache.

    cached = add_kv_cache(model, cfg, KVCacheMultiHeadAttention)
    ids = generate_greedy_cached(cached, idx, max_new_tokens=50)

The model's own forward pass then runs unchanged (so this works with your GPTModel as long as
it looks up `self.pos_emb(positions)` and calls `block.att(x)`, as the chapters build it).
"""
import time

import torch
import torch.nn as nn


class ContinuingPositions(nn.Module):
    """pos_emb, shifted: position i of a chunk is position `offset + i` of the sequence."""

    def __init__(self, pos_emb):
        super().__init__()
        self.pos_emb = pos_emb
        self.offset = 0

    def forward(self, positions):
        return self.pos_emb(positions + self.offset)


class CachedAttention(nn.Module):
    """A block's attention that always keeps its cache (a TransformerBlock calls att(x))."""

    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, x):
        return self.attention(x, use_cache=True)


class CachedGPT(nn.Module):
    """A GPTModel whose calls continue the sequence of the previous calls until `reset_cache()`."""

    def __init__(self, model, context_length):
        super().__init__()
        self.model = model
        self.context_length = context_length
        self.positions = model.pos_emb
        self.tokens_seen = 0

    def reset_cache(self):
        self.tokens_seen = 0
        self.positions.offset = 0
        for block in self.model.trf_blocks:
            block.att.attention.reset_cache()

    def forward(self, idx):
        num_tokens = idx.shape[1]
        if self.tokens_seen + num_tokens > self.context_length:
            raise ValueError(f"{self.tokens_seen} tokens are cached and {num_tokens} more would pass the "
                             f"context length of {self.context_length}: call reset_cache() first")
        self.positions.offset = self.tokens_seen
        logits = self.model(idx)
        self.tokens_seen += num_tokens
        return logits


def add_kv_cache(model, cfg, attention_class):
    """`model` (a GPTModel built from `cfg`) with every block's attention replaced by an
    `attention_class` (KVCacheMultiHeadAttention) holding a copy of the same weights. The model
    is changed in place and returned wrapped in a CachedGPT."""
    for block in model.trf_blocks:
        old = block.att
        new = attention_class(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                              cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        new.load_state_dict(old.state_dict())
        weight = old.W_query.weight
        new.to(device=weight.device, dtype=weight.dtype)
        new.train(old.training)
        block.att = CachedAttention(new)
    model.pos_emb = ContinuingPositions(model.pos_emb)
    return CachedGPT(model, cfg["context_length"])


def generate_greedy_cached(cached_model, idx, max_new_tokens, after_each_token=None):
    """Greedy generation with the cache: the prompt goes in once, then one new token per call.
    A cache cannot crop the context as `generate` does, so it stops at the context length.
    after_each_token(): called once each new token is appended (a StepTimer's tick, say)."""
    cached_model.reset_cache()
    with torch.no_grad():
        logits = cached_model(idx)
        for step in range(max_new_tokens):
            idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
            if after_each_token is not None:
                after_each_token()
            if step == max_new_tokens - 1 or idx.shape[1] > cached_model.context_length:
                break  # nothing more to predict, or no room left to feed the new token
            logits = cached_model(idx_next)
    return idx


class StepTimer:
    """The time of each step of a loop: call tick() at the end of every step; `times` holds the
    seconds since the previous tick (or since the timer was made). On a GPU it waits for the
    queued work first: GPU work runs behind the Python code, and the clock would stop early."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.times = []
        self.last = self._now()

    def tick(self):
        now = self._now()
        self.times.append(now - self.last)
        self.last = now

    def _now(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter()
