# expect: correct
# mistake: none (a second nn.Dropout for the feed-forward sub-block beside drop_shortcut, and separately named intermediate tensors)
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
        self.drop_ff = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        h = self.norm1(x)
        h = self.att(h)
        after_attention = x + self.drop_shortcut(h)
        g = self.norm2(after_attention)
        g = self.ff(g)
        return after_attention + self.drop_ff(g)
