# expect: wrong
# mistake: computes mean and variance without keepdim=True, so x - mean broadcasts the wrong way (a shape error for most inputs; only a single row happens to work).
# keywords: keepdim, broadcast, shape
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1)
        var = x.var(dim=-1, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift
