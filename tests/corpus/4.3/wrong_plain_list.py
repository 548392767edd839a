# expect: wrong
# mistake: keeps the layers in a plain Python list, so PyTorch does not register them: the module has no parameters (nothing to train, nothing saved, not moved by .to()).
# keywords: nn.sequential, parameters, registered
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = [
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        ]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
