# expect: wrong
# mistake: initialises a (rank, in_dim) tensor with kaiming_uniform_ and stores its transpose: fan_in is then in_dim, a bound of 1/sqrt(in_dim).
# keywords: transposed, fan_in
# absent: normal distribution
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        A = torch.empty(rank, in_dim)
        torch.nn.init.kaiming_uniform_(A, a=math.sqrt(5))
        self.A = nn.Parameter(A.T.contiguous())
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
