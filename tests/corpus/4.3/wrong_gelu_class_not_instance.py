# expect: wrong
# mistake: passes the class GELU to nn.Sequential instead of an instance GELU() (a TypeError when the module is built).
# keywords: gelu(), instance, parentheses
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU,
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
