# expect: wrong
# mistake: computes the mean and variance but divides x itself, x / sqrt(var + eps), forgetting to subtract the mean first.
# keywords: mean, subtract, x - mean
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = x / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift
