# expect: correct
# mistake: none (F.dropout with training=self.training instead of an nn.Dropout module; F.softmax)
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        num_tokens = x.size(1)
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_scores = torch.matmul(queries, keys.mT)
        future = self.mask[:num_tokens, :num_tokens] == 1
        attn_scores = attn_scores.masked_fill(future, float("-inf"))
        attn_weights = F.softmax(attn_scores / keys.size(-1) ** 0.5, dim=-1)
        attn_weights = F.dropout(attn_weights, p=self.p, training=self.training)
        return torch.matmul(attn_weights, values)
