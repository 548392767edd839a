# expect: correct
# mistake: none (ModuleList from a generator, concatenation of a tuple on dim=2, which is the last dim of (B, T, d_out))
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.heads = nn.ModuleList(
            CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias)
            for _ in range(num_heads)
        )

    def forward(self, x):
        head_outputs = tuple(head(x) for head in self.heads)
        return torch.cat(head_outputs, dim=2)
