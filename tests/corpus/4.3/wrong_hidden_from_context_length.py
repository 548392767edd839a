# expect: wrong
# mistake: sizes the hidden layer from the wrong configuration key, 4 * cfg["context_length"], instead of 4 * cfg["emb_dim"].
# keywords: emb_dim, hidden, 4 * emb_dim
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["context_length"]),
            GELU(),
            nn.Linear(4 * cfg["context_length"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
