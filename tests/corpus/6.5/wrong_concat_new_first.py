# expect: wrong
# mistake: concatenates the new keys and values before the cached ones (torch.cat([k, self.cache_k])): the mask columns then point at the wrong keys for a chunk of several tokens
# keywords: order, concaten, cat, position
class KVCacheMultiHeadAttention(MultiHeadAttention):
    """MultiHeadAttention (Task 3.2) that can remember the keys and values of the tokens it has seen."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.context_length = context_length
        self.cache_k = None
        self.cache_v = None

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None

    def forward(self, x, use_cache=False):
        if not use_cache:
            return super().forward(x)
        b, num_tokens, _ = x.shape
        past = 0 if self.cache_k is None else self.cache_k.shape[2]
        if past + num_tokens > self.context_length:
            raise ValueError(f"KV cache full: {past} cached + {num_tokens} new tokens > context_length "
                             f"{self.context_length}; call reset_cache()")
        q = self._split_heads(self.W_query(x))
        k = self._split_heads(self.W_key(x))
        v = self._split_heads(self.W_value(x))
        if self.cache_k is not None:
            k = torch.cat([k, self.cache_k], dim=2)
            v = torch.cat([v, self.cache_v], dim=2)
        self.cache_k, self.cache_v = k, v

        scores = q @ k.transpose(2, 3)
        mask = self.mask.bool()[past:past + num_tokens, :past + num_tokens]
        scores = scores.masked_fill(mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        ctx = (weights @ v).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(ctx)

    def _split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
