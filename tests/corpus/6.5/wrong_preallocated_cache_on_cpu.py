# expect: wrong
# mistake: preallocates the cache with torch.zeros(..., dtype=k.dtype) but without device=, so the cache lives on the CPU and writing the keys into it fails once the module and input are on CUDA (caught on the meta device without a GPU).
# keywords: device under test, on the cpu
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
        self.cache_k = None
        self.cache_v = None
        self.pos = 0  # how many tokens the cache holds

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
        self.pos = 0

    def forward(self, x, use_cache=False):
        b, T, _ = x.shape
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

        if use_cache:
            assert self.pos + T <= self.context_length, "KV cache overflow: call reset_cache()"
            if self.cache_k is None:
                self.cache_k = torch.zeros(b, self.num_heads, self.context_length, self.head_dim, dtype=k.dtype)
                self.cache_v = torch.zeros(b, self.num_heads, self.context_length, self.head_dim, dtype=v.dtype)
            self.cache_k[:, :, self.pos:self.pos + T] = k
            self.cache_v[:, :, self.pos:self.pos + T] = v
            start = self.pos
            self.pos += T
            k = self.cache_k[:, :, :self.pos]
            v = self.cache_v[:, :, :self.pos]
        else:
            start = 0

        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill(self.mask.bool()[start:start + T, :start + T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(out)
