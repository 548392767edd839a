# expect: wrong
# mistake: uses PyTorch's nn.GELU(), the exact erf form, instead of the chapter's tanh-approximation GELU().
# keywords: tanh, approximate, erf
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            nn.GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
