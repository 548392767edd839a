# expect: wrong
# mistake: calls kaiming_uniform_ without a=math.sqrt(5): with the default a=0 the bound is sqrt(6/rank), not 1/sqrt(rank).
# keywords: default a=0
# absent: normal distribution
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
