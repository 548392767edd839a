# expect: correct
# mistake: none (torch.var_mean with correction=0 computes the biased variance and the mean in one call)
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift
