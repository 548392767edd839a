# expect: correct
# mistake: none (scales the queries by 1/sqrt(d_out) before the dot product, which gives the same scores)
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries = (x @ self.W_query) / math.sqrt(self.d_out)
        keys = x @ self.W_key
        values = x @ self.W_value
        attn_weights = (queries @ keys.transpose(-1, -2)).softmax(dim=-1)
        return attn_weights @ values
