# expect: correct
# mistake: none (multiplies by torch.rsqrt(var + eps) instead of dividing by the square root; eps as a class attribute)
class LayerNorm(nn.Module):
    eps = 1e-5

    def __init__(self, emb_dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = torch.mean(x, -1, keepdim=True)
        var = torch.var(x, -1, keepdim=True, unbiased=False)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.scale + self.shift
