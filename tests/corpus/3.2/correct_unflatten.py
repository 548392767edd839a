# expect: correct
# mistake: none (splits heads with unflatten and merges them with flatten)
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be a multiple of num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def _split(self, t):
        # (b, T, d_out) -> (b, num_heads, T, head_dim)
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, x):
        T = x.shape[1]
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.mask[:T, :T].bool(), float("-inf"))
        weights = self.dropout(torch.softmax(scores / math.sqrt(self.head_dim), dim=-1))
        ctx = (weights @ v).transpose(1, 2).flatten(2)
        return self.out_proj(ctx)
