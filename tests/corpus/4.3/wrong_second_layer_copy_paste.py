# expect: wrong
# mistake: copy-pastes the first layer, so the second is also Linear(emb_dim, 4 * emb_dim): a shape error on the 4 * emb_dim hidden features.
# keywords: shape, 4 * emb_dim, emb_dim
class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)
