# expect: wrong
# mistake: overwrites x with its normalized version before the residual add, so each shortcut adds norm(x) instead of the sub-block's input x.
# keywords: shortcut, norm, before
class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            dropout=cfg["drop_rate"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = self.norm1(x)
        x = x + self.drop_shortcut(self.att(x))

        x = self.norm2(x)
        x = x + self.drop_shortcut(self.ff(x))
        return x
