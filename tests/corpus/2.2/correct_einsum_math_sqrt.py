# expect: correct
# mistake: none (einsum for all products, scale stored once with math.sqrt)
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        q = torch.einsum("...td,...de->...te", x, self.W_query)
        k = torch.einsum("...td,...de->...te", x, self.W_key)
        v = torch.einsum("...td,...de->...te", x, self.W_value)
        scores = torch.einsum("...qe,...ke->...qk", q, k) * self.scale
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("...qk,...ke->...qe", weights, v)
