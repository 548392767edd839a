# expect: wrong
# mistake: initialises A with kaiming_normal_(a=math.sqrt(5)): the same spread, but normal, not uniform.
# keywords: normal distribution
# absent: transposed
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_normal_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
