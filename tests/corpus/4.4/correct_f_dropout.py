# expect: correct
# mistake: none (keeps the drop_shortcut attribute but drops with F.dropout(..., p, training=self.training) in forward)
import torch.nn.functional as F


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.drop_rate = cfg["drop_rate"]
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
            dropout=cfg["drop_rate"], num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"],
        )
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.ff = FeedForward(cfg)
        self.drop_shortcut = nn.Dropout(self.drop_rate)

    def forward(self, x):
        attn_out = self.att(self.norm1(x))
        x = x + F.dropout(attn_out, p=self.drop_rate, training=self.training)
        ff_out = self.ff(self.norm2(x))
        x = x + F.dropout(ff_out, p=self.drop_rate, training=self.training)
        return x
