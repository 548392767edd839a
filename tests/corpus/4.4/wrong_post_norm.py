# expect: wrong
# mistake: post-LayerNorm (the original transformer's order): adds the shortcut first and normalizes the sum, x = norm1(x + drop(att(x))), instead of normalizing each sub-block's input.
# keywords: pre-layernorm, pre-norm, before
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
        x = self.norm1(x + self.drop_shortcut(self.att(x)))
        x = self.norm2(x + self.drop_shortcut(self.ff(x)))
        return x
