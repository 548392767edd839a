# expect: wrong
# mistake: A is drawn from a standard normal distribution (torch.randn), far wider than the Kaiming bound.
# keywords: normal distribution
# absent: transposed
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.randn(in_dim, rank))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
