# expect: correct
# mistake: none (the layers collected in a list first, then unpacked into nn.Sequential; the hidden size in a variable)
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb_dim = cfg["emb_dim"]
        hidden_dim = 4 * emb_dim
        layers = [nn.Linear(emb_dim, hidden_dim), GELU(), nn.Linear(hidden_dim, emb_dim)]
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)
