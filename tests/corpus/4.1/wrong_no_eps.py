# expect: wrong
# mistake: divides by torch.sqrt(var) with no eps at all, so a row whose values are all equal gives NaN (and small-variance rows differ).
# keywords: eps, nan, 1e-5
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var)
        return self.scale * norm_x + self.shift
