# expect: correct
# mistake: none (bool mask buffer, torch.where for masking, F.dropout with training=self.training)
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )

    def forward(self, x):
        b, T, _ = x.shape

        def heads(t):
            return t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = torch.where(self.mask[:T, :T], torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device), scores)
        weights = F.dropout(F.softmax(scores, dim=-1), p=self.p, training=self.training)
        ctx = (weights @ v).transpose(1, 2).reshape(b, T, self.d_out)
        return self.out_proj(ctx)
