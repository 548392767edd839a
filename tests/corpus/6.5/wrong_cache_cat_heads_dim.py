# expect: wrong
# mistake: concatenates the cached keys and values along dim=1, the heads, instead of dim=2, the tokens: the second cached call multiplies queries of num_heads heads with keys of twice as many.
# keywords: dim=2, the heads
# absent: the mask does not fit
# neighbour-of: wrong_mask_rows_from_zero
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

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None

    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        queries = self._split_heads(self.W_query(x))
        keys = self._split_heads(self.W_key(x))
        values = self._split_heads(self.W_value(x))

        start = 0
        if use_cache:
            if self.cache_k is not None:
                start = self.cache_k.shape[2]
            if start + num_tokens > self.context_length:
                raise ValueError(f"{start} cached + {num_tokens} new tokens do not fit in "
                                 f"context_length={self.context_length}: call reset_cache()")
            if self.cache_k is not None:
                keys = torch.cat((self.cache_k, keys), dim=1)
                values = torch.cat((self.cache_v, values), dim=1)
            self.cache_k, self.cache_v = keys, values

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :start + num_tokens]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)

    def _split_heads(self, t):
        b, num_tokens, _ = t.shape
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
