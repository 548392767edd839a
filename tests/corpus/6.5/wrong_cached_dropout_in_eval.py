# expect: wrong
# mistake: the cached path (a separate branch written for use_cache=True) calls F.dropout(weights, self.dropout_p) without training=self.training, so in eval mode it still drops attention weights; the plain path uses nn.Dropout and is right.
# keywords: eval mode, training=self.training
import torch.nn.functional as F


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
        self.dropout_p = dropout
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

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        q, k, v = self._heads(self.W_query(x)), self._heads(self.W_key(x)), self._heads(self.W_value(x))
        if not use_cache:
            scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
            weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
            return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, n, self.d_out))

        start = 0 if self.cache_k is None else self.cache_k.shape[2]
        if start + n > self.context_length:
            raise ValueError(f"{start} cached + {n} new tokens exceed context_length={self.context_length}")
        if self.cache_k is not None:
            k = torch.cat([self.cache_k, k], dim=2)
            v = torch.cat([self.cache_v, v], dim=2)
        self.cache_k, self.cache_v = k, v
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[start:start + n, :start + n], -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        weights = F.dropout(weights, self.dropout_p)  # training defaults to True
        return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, n, self.d_out))
