# expect: correct
# mistake: none (F.scaled_dot_product_attention with the buffer as a boolean attn_mask and dropout_p only in training; its dropout matched nn.Dropout seed for seed on CPU with torch 2.13, but the fused CUDA kernels may draw random numbers differently (not checked))
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        T = x.shape[1]
        allowed = self.mask[:T, :T] == 0  # True where a query may attend
        return F.scaled_dot_product_attention(
            self.W_query(x),
            self.W_key(x),
            self.W_value(x),
            attn_mask=allowed,
            dropout_p=self.dropout.p if self.training else 0.0,
        )
