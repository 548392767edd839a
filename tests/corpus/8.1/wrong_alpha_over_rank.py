# expect: wrong
# mistake: scales by alpha / rank (the LoRA paper's scaling) instead of alpha.
# keywords: alpha / rank
# absent: not scaled by alpha
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.rank = rank
        self.alpha = alpha

    def forward(self, x):
        return (self.alpha / self.rank) * (x @ self.A @ self.B)
