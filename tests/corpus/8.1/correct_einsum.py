# expect: correct
# mistake: none (kaiming_uniform_ on the parameter after creating it, B from torch.zeros_like-style new_zeros; forward with einsum)
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.rank = rank
        self.alpha = alpha
        A = torch.empty(in_dim, rank)
        torch.nn.init.kaiming_uniform_(A, a=math.sqrt(5))
        self.A = nn.Parameter(A)
        self.B = nn.Parameter(A.new_zeros(rank, out_dim))

    def forward(self, x):
        return self.alpha * torch.einsum("...i,ir,ro->...o", x, self.A, self.B)
