# expect: wrong
# mistake: stores the weights with shape (d_out, d_in) like nn.Linear and multiplies by their transpose; the contract pins (d_in, d_out).
# keywords: shape, (d_in, d_out), W_query
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_out, d_in))
        self.W_key = nn.Parameter(torch.rand(d_out, d_in))
        self.W_value = nn.Parameter(torch.rand(d_out, d_in))

    def forward(self, x):
        queries = x @ self.W_query.T
        keys = x @ self.W_key.T
        values = x @ self.W_value.T
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values
