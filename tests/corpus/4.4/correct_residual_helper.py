# expect: correct
# mistake: none (a helper method that runs one pre-norm sub-block with its shortcut)
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

    def _sub_block(self, x, norm, layer):
        return x + self.drop_shortcut(layer(norm(x)))

    def forward(self, x):
        x = self._sub_block(x, self.norm1, self.att)
        return self._sub_block(x, self.norm2, self.ff)
