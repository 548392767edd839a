# expect: correct
# mistake: none (caches the projected keys and values as (batch, tokens, d_out), before the split into heads; the causal mask built by comparing positions on the input's device)
class KVCacheMultiHeadAttention(nn.Module):
    """MultiHeadAttention (Task 3.2) that can remember the keys and values of the tokens it has seen."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
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
        self.reset_cache()

    def reset_cache(self):
        self.cache_k = None  # (b, tokens so far, d_out)
        self.cache_v = None

    def forward(self, x, use_cache=False):
        b, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        offset = 0
        if use_cache:
            offset = 0 if self.cache_k is None else self.cache_k.shape[1]
            if offset + T > self.context_length:
                raise RuntimeError(f"cache overflow: {offset} + {T} tokens > context_length={self.context_length}")
            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=1)
                v = torch.cat([self.cache_v, v], dim=1)
            self.cache_k, self.cache_v = k, v
        S = k.shape[1]
        q, k, v = (self._split_heads(t) for t in (q, k, v))

        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.head_dim ** 0.5
        future = self.mask[offset:offset + T, :S].bool()
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        weights = self.dropout(weights)
        out = torch.einsum("bhqk,bhkd->bqhd", weights, v).reshape(b, T, self.d_out)
        return self.out_proj(out)

    def _split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
