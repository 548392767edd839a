# expect: wrong
# mistake: gives each head d_out // num_heads outputs (as in the efficient class of 3.2), so the output width is d_out instead of num_heads * d_out.
# keywords: num_heads * d_out, width, d_out, shape
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
