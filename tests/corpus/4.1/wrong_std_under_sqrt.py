# expect: wrong
# mistake: computes the standard deviation with x.std(...) and then takes its square root again, torch.sqrt(std + eps), so it divides by the fourth root of the variance.
# keywords: variance, std, sqrt, square root
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        std = x.std(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(std + self.eps)
        return self.scale * norm_x + self.shift
