# expect: correct
# mistake: none (draws A with nn.init.uniform_ between -1/sqrt(rank) and 1/sqrt(rank), the same distribution as kaiming_uniform_(a=sqrt(5)))
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        bound = 1 / math.sqrt(rank)
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        nn.init.uniform_(self.A, -bound, bound)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
