# expect: wrong
# mistake: every call, use_cache=False too, appends its keys and values to the cache (only the cached call reads them), so a plain forward(x) fills the cache and the second plain call on the same input hits the student's own 'cache full' error.
# keywords: must not touch the cache, use_cache left at False
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
        cached = 0 if self.cache_k is None else self.cache_k.shape[2]
        if cached + num_tokens > self.context_length:
            raise ValueError(f"the cache holds {cached} tokens and {num_tokens} more would pass the "
                             f"context_length of {self.context_length}: call reset_cache() first")
        new_k = keys if self.cache_k is None else torch.cat((self.cache_k, keys), dim=2)
        new_v = values if self.cache_v is None else torch.cat((self.cache_v, values), dim=2)
        self.cache_k, self.cache_v = new_k, new_v  # every call remembers its tokens
        if use_cache:
            start = cached
            keys, values = new_k, new_v

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
