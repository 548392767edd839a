# expect: correct
# mistake: none (F.scaled_dot_product_attention on the split heads with the buffer as attn_mask; its dropout matched nn.Dropout seed for seed on CPU with torch 2.13, but the fused CUDA kernels may draw random numbers differently (not checked))
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.dropout = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, T, _ = x.shape
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        ctx = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=~self.mask.bool()[:T, :T],
            dropout_p=self.dropout if self.training else 0.0,
        )
        return self.out_proj(ctx.transpose(1, 2).reshape(b, T, self.d_out))
