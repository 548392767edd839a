# expect: wrong
# mistake: wraps PyTorch's nn.LayerNorm instead of writing the normalization, so the parameters are norm.weight and norm.bias rather than scale and shift.
# keywords: scale, shift
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.norm = nn.LayerNorm(emb_dim, eps=1e-5)

    def forward(self, x):
        return self.norm(x)
