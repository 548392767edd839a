# expect: correct
# mistake: none (the first num_tokens rows of the position table sliced from its weight, and a loop over the nn.Sequential's blocks)
class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        num_tokens = in_idx.shape[-1]
        x = self.tok_emb(in_idx) + self.pos_emb.weight[:num_tokens]
        x = self.drop_emb(x)
        for block in self.trf_blocks:
            x = block(x)
        return self.out_head(self.final_norm(x))
