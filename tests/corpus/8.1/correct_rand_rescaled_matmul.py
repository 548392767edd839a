# expect: correct
# mistake: none (rescales torch.rand to [-1/sqrt(rank), 1/sqrt(rank)); forward with torch.matmul, alpha applied to x first)
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        std_dev = 1 / rank ** 0.5
        self.A = nn.Parameter((torch.rand(in_dim, rank) * 2 - 1) * std_dev)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return torch.matmul(torch.matmul(self.alpha * x, self.A), self.B)
