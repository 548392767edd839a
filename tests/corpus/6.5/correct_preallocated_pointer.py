# expect: correct
# mistake: none (cache preallocated for context_length tokens on the first cached call, with the keys' device and dtype, filled through a write pointer; the attention reads the filled part)
class KVCacheMultiHeadAttention(nn.Module):
    """MultiHeadAttention (Task 3.2) that can remember the keys and values of the tokens it has seen."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
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
        self.cache_k = None
        self.cache_v = None
        self.ptr = 0

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr = 0

    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        queries = self._split_heads(self.W_query(x))
        keys_new = self._split_heads(self.W_key(x))
        values_new = self._split_heads(self.W_value(x))

        if use_cache:
            if self.ptr + num_tokens > self.context_length:
                raise ValueError(f"cannot add {num_tokens} tokens to a cache holding {self.ptr} "
                                 f"(context_length={self.context_length})")
            if self.cache_k is None:
                shape = (b, self.num_heads, self.context_length, self.head_dim)
                self.cache_k = torch.zeros(shape, dtype=keys_new.dtype, device=keys_new.device)
                self.cache_v = torch.zeros(shape, dtype=values_new.dtype, device=values_new.device)
            start = self.ptr
            self.cache_k[:, :, start:start + num_tokens] = keys_new
            self.cache_v[:, :, start:start + num_tokens] = values_new
            self.ptr += num_tokens
            keys = self.cache_k[:, :, :self.ptr]
            values = self.cache_v[:, :, :self.ptr]
        else:
            start = 0
            keys, values = keys_new, values_new

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[start:start + num_tokens, :start + num_tokens]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)

    def _split_heads(self, t):
        b, num_tokens, _ = t.shape
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
