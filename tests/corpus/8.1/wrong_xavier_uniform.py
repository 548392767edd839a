# expect: wrong
# mistake: initialises A with xavier_uniform_, a bound of sqrt(6/(in_dim + rank)), much narrower than 1/sqrt(rank).
# keywords: xavier
# absent: normal distribution
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.xavier_uniform_(self.A)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
