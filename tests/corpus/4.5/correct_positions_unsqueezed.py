# expect: correct
# mistake: none (positions of shape (1, num_tokens) via arange(...).unsqueeze(0), expanded over the batch)
class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        blocks = []
        for _ in range(cfg["n_layers"]):
            blocks.append(TransformerBlock(cfg))
        self.trf_blocks = nn.Sequential(*blocks)
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        b, t = in_idx.shape
        positions = torch.arange(t, device=in_idx.device).unsqueeze(0).expand(b, t)
        x = self.tok_emb(in_idx) + self.pos_emb(positions)
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        return self.out_head(x)
