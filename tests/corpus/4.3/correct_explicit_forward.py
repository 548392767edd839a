# expect: correct
# mistake: none (forward calls the three layers of self.layers one by one)
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(d, d * 4), GELU(), nn.Linear(d * 4, d))

    def forward(self, x):
        h = self.layers[0](x)
        h = self.layers[1](h)
        return self.layers[2](h)
