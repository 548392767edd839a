# expect: correct
# mistake: none (einsum over heads; the head split is a view and the merge a reshape)
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
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
        h, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(b, T, h, hd)
        k = self.W_key(x).view(b, T, h, hd)
        v = self.W_value(x).view(b, T, h, hd)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / hd ** 0.5
        scores = scores.masked_fill(self.mask[:T, :T].bool(), float("-inf"))
        weights = self.dropout(scores.softmax(dim=-1))
        ctx = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, T, self.d_out)
        return self.out_proj(ctx)
