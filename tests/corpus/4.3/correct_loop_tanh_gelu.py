# expect: correct
# mistake: none (PyTorch's nn.GELU(approximate="tanh") in the Sequential, forward loops over the layers)
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
