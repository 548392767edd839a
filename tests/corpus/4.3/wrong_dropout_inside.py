# expect: wrong
# mistake: adds nn.Dropout(cfg["drop_rate"]) after the GELU inside the feed-forward network (the contract's FeedForward has no dropout; the block drops its output).
# keywords: dropout
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Dropout(cfg["drop_rate"]),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
