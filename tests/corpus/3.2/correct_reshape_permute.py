# expect: correct
# mistake: none (reshape + permute instead of view + transpose, reshape to merge without contiguous)
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, T, _ = x.shape
        shape = (b, T, self.num_heads, self.head_dim)
        q = self.W_query(x).reshape(shape).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(shape).permute(0, 2, 3, 1)  # already transposed: (b, h, head_dim, T)
        v = self.W_value(x).reshape(shape).permute(0, 2, 1, 3)
        scores = q @ k
        scores = scores.masked_fill(self.mask.bool()[:T, :T], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        ctx = (weights @ v).permute(0, 2, 1, 3).reshape(b, T, self.d_out)
        return self.out_proj(ctx)
