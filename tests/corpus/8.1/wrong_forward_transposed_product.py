# expect: wrong
# mistake: multiplies x by (A @ B).T, as if A @ B were an nn.Linear weight (out, in): fails unless in_dim == out_dim, and is wrong even then.
# keywords: do not chain, (in_dim, rank)
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ (self.A @ self.B).T)
