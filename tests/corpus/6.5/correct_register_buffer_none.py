# expect: correct
# mistake: none (cache_k and cache_v registered as non-persistent buffers set to None, so .to(device) moves a filled cache and state_dict leaves it out; assert-based bounds check)
class KVCacheMultiHeadAttention(nn.Module):
    """MultiHeadAttention (Task 3.2) that can remember the keys and values of the tokens it has seen."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
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
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None

    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        queries = self._split_heads(self.W_query(x))
        keys = self._split_heads(self.W_key(x))
        values = self._split_heads(self.W_value(x))

        n_cached = 0
        if use_cache:
            if self.cache_k is not None:
                n_cached = self.cache_k.size(2)
            assert n_cached + num_tokens <= self.context_length, (
                f"{n_cached} cached + {num_tokens} new tokens exceed context_length={self.context_length}")
            if n_cached:
                keys = torch.cat((self.cache_k, keys), dim=2)
                values = torch.cat((self.cache_v, values), dim=2)
            self.cache_k = keys
            self.cache_v = values

        n_keys = keys.size(2)
        attn_scores = queries @ keys.transpose(-2, -1)
        mask_bool = self.mask.bool()[n_cached:n_cached + num_tokens, :n_keys]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)

    def _split_heads(self, t):
        b, num_tokens, _ = t.shape
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
