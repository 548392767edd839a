# expect: wrong
# mistake: keeps A and B as plain tensors, not nn.Parameter: they are not registered and never trained.
# keywords: nn.Parameter
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.empty(in_dim, rank)
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.zeros(rank, out_dim)
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)
