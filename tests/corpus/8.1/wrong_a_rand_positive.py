# expect: wrong
# mistake: scales torch.rand to [0, 1/sqrt(rank)): every value of A is positive instead of spread over [-1/sqrt(rank), 1/sqrt(rank)].
# keywords: negative
# absent: normal distribution
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.rand(in_dim, rank) / math.sqrt(rank))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
