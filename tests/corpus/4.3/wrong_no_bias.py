# expect: wrong
# mistake: creates both linear layers with bias=False (confusing them with the qkv_bias=False of the attention).
# keywords: bias
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"], bias=False),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"], bias=False),
        )

    def forward(self, x):
        return self.layers(x)
