# expect: wrong
# mistake: writes a=5 instead of a=math.sqrt(5): the bound shrinks to sqrt(6/26)/sqrt(rank), about 0.48/sqrt(rank).
# keywords: a=math.sqrt(5)
# absent: normal distribution
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=5)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
