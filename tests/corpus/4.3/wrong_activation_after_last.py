# expect: wrong
# mistake: puts a second GELU() after the last linear layer as well.
# keywords: gelu, last, after
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
            GELU(),
        )

    def forward(self, x):
        return self.layers(x)
