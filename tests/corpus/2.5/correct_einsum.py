# expect: correct
# mistake: none (einsum for the scores and the weighted sum, in-place masked_fill_ on its own local scores)
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.scale = d_out ** -0.5
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        n = x.shape[-2]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bqd,bkd->bqk", q, k)
        scores.masked_fill_(self.mask[:n, :n].bool(), float("-inf"))
        weights = self.dropout(torch.softmax(scores * self.scale, dim=-1))
        return torch.einsum("bqk,bkd->bqd", weights, v)
