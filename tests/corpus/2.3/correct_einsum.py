# expect: correct
# mistake: none (einsum for the two attention products, scale precomputed)
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = d_out ** -0.5

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("...id,...jd->...ij", q, k) * self.scale
        return torch.einsum("...ij,...jd->...id", scores.softmax(-1), v)
