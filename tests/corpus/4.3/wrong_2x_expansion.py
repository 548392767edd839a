# expect: wrong
# mistake: expands to 2 * emb_dim hidden units instead of 4 * emb_dim.
# keywords: 4 * emb_dim, 4x, four, hidden
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 2 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(2 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
