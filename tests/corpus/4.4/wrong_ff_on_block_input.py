# expect: wrong
# mistake: feeds the feed-forward sub-block norm2 of the block input instead of the result of the attention sub-block (the two sub-blocks run side by side, not one after the other).
# keywords: attention, result, after
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
        shortcut = x
        h = self.norm1(x)
        h = self.att(h)
        h = self.drop_shortcut(h)
        h = h + shortcut

        f = self.norm2(x)
        f = self.ff(f)
        f = self.drop_shortcut(f)
        return f + h
