# expect: correct
# mistake: none (initialises the weights with a scaled normal distribution instead of torch.rand; init is not pinned by the contract, but seeded outputs differ from the book's)
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        std = 1.0 / math.sqrt(d_in)
        self.W_query = nn.Parameter(torch.randn(d_in, d_out) * std)
        self.W_key = nn.Parameter(torch.randn(d_in, d_out) * std)
        self.W_value = nn.Parameter(torch.randn(d_in, d_out) * std)

    def forward(self, x):
        queries = x @ self.W_query
        keys = x @ self.W_key
        values = x @ self.W_value
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values
