# expect: wrong
# mistake: adds a shortcut inside the feed-forward network, returning x + self.layers(x) (the shortcut belongs to the transformer block).
# keywords: shortcut, residual
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return x + self.layers(x)
