# expect: correct
# mistake: none (torch.matmul, .mT for the key transpose and F.softmax)
import torch.nn.functional as F


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries = torch.matmul(x, self.W_query)
        keys = torch.matmul(x, self.W_key)
        values = torch.matmul(x, self.W_value)
        d_k = keys.size(-1)
        attn_weights = F.softmax(torch.matmul(queries, keys.mT) / d_k ** 0.5, dim=-1)
        return torch.matmul(attn_weights, values)
