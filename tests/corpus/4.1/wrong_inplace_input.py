# expect: wrong
# mistake: centres the input in place, x -= mean and x /= ..., which changes the caller's tensor (and fails on a leaf tensor that requires grad).
# keywords: in place, in-place, input
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        x -= mean
        x /= torch.sqrt(var + self.eps)
        return self.scale * x + self.shift
