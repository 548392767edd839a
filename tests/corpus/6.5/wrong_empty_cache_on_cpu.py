# expect: wrong
# mistake: starts the cache of a new sequence as torch.empty(b, num_heads, 0, head_dim) without device= and always concatenates to it: the empty cache lives on the CPU, so torch.cat fails once the module and input are on CUDA (caught on the meta device without a GPU).
# keywords: device under test, on the cpu
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
        self.cache_k = None
        self.cache_v = None

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None

    def forward(self, x, use_cache=False):
        batch, n_new, _ = x.shape
        q = self._split_heads(self.W_query(x))
        k = self._split_heads(self.W_key(x))
        v = self._split_heads(self.W_value(x))

        n_past = 0
        if use_cache:
            if self.cache_k is None:
                self.cache_k = torch.empty(batch, self.num_heads, 0, self.head_dim)
                self.cache_v = torch.empty(batch, self.num_heads, 0, self.head_dim)
            n_past = self.cache_k.shape[2]
            if n_past + n_new > self.context_length:
                raise ValueError(f"context_length={self.context_length} exceeded: reset the cache")
            k = torch.cat([self.cache_k, k], dim=2)
            v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v

        scores = q @ k.transpose(2, 3)
        scores = scores.masked_fill(self.mask.bool()[n_past:n_past + n_new, :n_past + n_new], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        out = (weights @ v).transpose(1, 2).contiguous().view(batch, n_new, self.d_out)
        return self.out_proj(out)

    def _split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
