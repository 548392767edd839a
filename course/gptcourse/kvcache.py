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

`StaticCachedGPT` is the next step, what serving code does: the cache is allocated once, for
`context_length` positions, and each token's keys and values are written into it in place
(no `torch.cat`, which copies the whole cache at every token). Every one-token step then has
the same shapes and reads and writes the same memory, so on a GPU it can be recorded once as
a CUDA graph and replayed: one launch per token instead of a few hundred small ones.

    static = StaticCachedGPT(model, cfg, batch_size=1)
    static.capture_decode_step()  # on a GPU only
    ids = generate_greedy_cached(static, idx, max_new_tokens=50)
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


def rebuilt_attention(old, cfg, attention_class):
    """A new `attention_class` module built from `cfg`, holding a copy of the weights of `old`
    (an attention module with the same parameter names), on its device, in its dtype and mode."""
    new = attention_class(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                          cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
    new.load_state_dict(old.state_dict())
    weight = old.W_query.weight
    new.to(device=weight.device, dtype=weight.dtype)
    new.train(old.training)
    return new


def add_kv_cache(model, cfg, attention_class):
    """`model` (a GPTModel built from `cfg`) with every block's attention replaced by an
    `attention_class` (KVCacheMultiHeadAttention) holding a copy of the same weights. The model
    is changed in place and returned wrapped in a CachedGPT."""
    for block in model.trf_blocks:
        block.att = CachedAttention(rebuilt_attention(block.att, cfg, attention_class))
    model.pos_emb = ContinuingPositions(model.pos_emb)
    return CachedGPT(model, cfg["context_length"])


def generate_greedy_cached(cached_model, idx, max_new_tokens, after_each_token=None):
    """Greedy generation with the cache (a CachedGPT or a StaticCachedGPT): the prompt goes in
    once, then one new token per call. A cache cannot crop the context as `generate` does, so
    it stops at the context length.
    after_each_token(): called once each new token is appended (a StepTimer's tick, say)."""
    for idx in greedy_cached_steps(cached_model, idx, max_new_tokens):
        if after_each_token is not None:
            after_each_token()
    return idx


@torch.no_grad()
def greedy_cached_steps(cached_model, idx, max_new_tokens):
    """generate_greedy_cached one token at a time: yields the ids each time a token is added
    (so that a benchmark can take turns between several ways of generating)."""
    cached_model.reset_cache()
    logits = cached_model(idx)
    for step in range(max_new_tokens):
        idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
        yield idx
        if step == max_new_tokens - 1 or idx.shape[1] > cached_model.context_length:
            break  # nothing more to predict, or no room left to feed the new token
        logits = cached_model(idx_next)


# ------------------------------------------------------------------------------------------
# A cache allocated once, and a decode step recorded once
# ------------------------------------------------------------------------------------------

class CachePosition:
    """How many tokens a static cache holds. Kept twice: as a tensor on the model's device,
    which the layers read (a recorded CUDA graph reads it again at every replay, so it is only
    ever changed in place), and as a Python int, for checks that must not wait for the GPU."""

    def __init__(self, device):
        self.tensor = torch.zeros((), dtype=torch.long, device=device)
        self.tokens = 0

    def advance(self, num_tokens):
        self.tensor.add_(num_tokens)
        self.tokens += num_tokens

    def reset(self):
        self.tensor.zero_()
        self.tokens = 0


class StaticPositions(nn.Module):
    """pos_emb, shifted by the tokens already in the static cache (read from its tensor)."""

    def __init__(self, pos_emb, position):
        super().__init__()
        self.pos_emb = pos_emb
        self.position = position

    def forward(self, positions):
        return self.pos_emb(positions + self.position.tensor)


class StaticCacheAttention(nn.Module):
    """The attention of a block, with a cache of `context_length` positions allocated once.

    It uses the layers of the attention it replaces (W_query, W_key, W_value, out_proj: the
    same weights) and computes what Task 6.5 computes, for generation (no dropout). The keys
    and values of a chunk are written into the cache at their positions; the queries then
    attend over the whole cache, with every position after their own masked: the shapes are
    the same at every step, whatever the number of tokens seen.
    """

    def __init__(self, attention, cfg, batch_size, position):
        super().__init__()
        self.W_query, self.W_key, self.W_value = attention.W_query, attention.W_key, attention.W_value
        self.out_proj = attention.out_proj
        self.num_heads = cfg["n_heads"]
        self.head_dim = cfg["emb_dim"] // cfg["n_heads"]
        self.position = position
        weight = attention.W_query.weight
        shape = (batch_size, self.num_heads, cfg["context_length"], self.head_dim)
        self.register_buffer("cache_k", torch.zeros(shape, device=weight.device, dtype=weight.dtype), persistent=False)
        self.register_buffer("cache_v", torch.zeros(shape, device=weight.device, dtype=weight.dtype), persistent=False)

    def forward(self, x):
        b, num_tokens, _ = x.shape
        queries = self._split_heads(self.W_query(x))
        # This chunk's positions in the sequence: its keys and values go there, in place.
        positions = self.position.tensor + torch.arange(num_tokens, device=x.device)
        self.cache_k.index_copy_(2, positions, self._split_heads(self.W_key(x)))
        self.cache_v.index_copy_(2, positions, self._split_heads(self.W_value(x)))
        # A query sees the keys at its own position and before; the rest of the cache (not
        # written yet, or left from an earlier sequence) is masked.
        key_positions = torch.arange(self.cache_k.shape[2], device=x.device)
        hidden = key_positions > positions.unsqueeze(-1)  # (num_tokens, context_length)
        attn_scores = (queries @ self.cache_k.transpose(2, 3)).masked_fill(hidden, float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1)
        context = (attn_weights @ self.cache_v).transpose(1, 2).contiguous().view(b, num_tokens, -1)
        return self.out_proj(context)

    def _split_heads(self, t):
        b, num_tokens, _ = t.shape
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)


class StaticCachedGPT(nn.Module):
    """A GPTModel with a static cache for `batch_size` sequences: each call continues the
    sequence of the previous calls until `reset_cache()`, like CachedGPT. The model is changed
    in place (its attention and pos_emb replaced; the weights are the same).

    After `capture_decode_step()` (a CUDA device only) a one-token call replays the recorded
    step: it copies the new ids into the recorded input and returns the recorded output tensor,
    which the next call overwrites.
    """

    def __init__(self, model, cfg, batch_size):
        super().__init__()
        self.position = CachePosition(model.tok_emb.weight.device)
        for block in model.trf_blocks:
            block.att = StaticCacheAttention(block.att, cfg, batch_size, self.position)
        model.pos_emb = StaticPositions(model.pos_emb, self.position)
        self.model = model
        self.context_length = cfg["context_length"]
        self.batch_size = batch_size
        self.graph = None

    def reset_cache(self):
        # Nothing to clear: whatever the cache holds past the position is masked.
        self.position.reset()

    def forward(self, idx):
        batch_size, num_tokens = idx.shape
        if batch_size != self.batch_size:
            raise ValueError(f"this cache holds {self.batch_size} sequences, not {batch_size}")
        if self.position.tokens + num_tokens > self.context_length:
            raise ValueError(f"{self.position.tokens} tokens are cached and {num_tokens} more would pass the "
                             f"context length of {self.context_length}: call reset_cache() first")
        if num_tokens == 1 and self.graph is not None:
            self.step_ids.copy_(idx)
            self.graph.replay()
            logits = self.step_logits
        else:
            logits = self.model(idx)
        self.position.advance(num_tokens)
        return logits

    def capture_decode_step(self, warmup_calls=3):
        """Record the one-token step as a CUDA graph: every kernel it launches, with the
        memory each reads and writes, replayed later by one call. Resets the cache."""
        device = self.position.tensor.device
        if device.type != "cuda":
            raise ValueError(f"a CUDA graph needs a CUDA device; on {device.type} the step runs as it is")
        self.step_ids = torch.zeros((self.batch_size, 1), dtype=torch.long, device=device)
        with torch.no_grad():
            # The first calls set up kernels and the allocator, which a graph cannot record:
            # run them first, on a side stream as PyTorch asks. They write position 0 of the
            # cache, which the reset below makes free again.
            side = torch.cuda.Stream(device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(side):
                for _ in range(warmup_calls):
                    self.model(self.step_ids)
            torch.cuda.current_stream(device).wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.step_logits = self.model(self.step_ids)
        self.reset_cache()
        return self


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
