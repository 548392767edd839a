# expect: correct
# mistake: none (the variance written out as the mean of the squared deviations)
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        centered = x - x.mean(dim=-1, keepdim=True)
        var = (centered ** 2).mean(dim=-1, keepdim=True)
        norm_x = centered / torch.sqrt(var + self.eps)
        return norm_x * self.scale + self.shift
