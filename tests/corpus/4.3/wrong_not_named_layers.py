# expect: wrong
# mistake: calls the nn.Sequential self.net instead of self.layers, so the parameters are net.0.weight ... rather than layers.0.weight ...
# keywords: layers
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.net(x)
