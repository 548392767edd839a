# expect: correct
# mistake: none (register_parameter, the bound drawn with Tensor.uniform_, forward with two F.linear calls)
import torch.nn.functional as F


class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        limit = 1.0 / math.sqrt(rank)
        self.register_parameter("A", nn.Parameter(torch.empty(in_dim, rank).uniform_(-limit, limit)))
        self.register_parameter("B", nn.Parameter(torch.zeros(rank, out_dim)))
        self.alpha = alpha

    def forward(self, x):
        hidden = F.linear(x, self.A.T)  # x @ A
        return self.alpha * F.linear(hidden, self.B.T)  # (x @ A) @ B
