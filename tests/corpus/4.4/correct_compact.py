# expect: correct
# mistake: none (each sub-block in one line, keyword-free positional arguments to MultiHeadAttention)
class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(emb, emb, cfg["context_length"], cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(emb)
        self.norm2 = LayerNorm(emb)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        x = x + self.drop_shortcut(self.ff(self.norm2(x)))
        return x
