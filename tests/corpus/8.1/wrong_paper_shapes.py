# expect: wrong
# mistake: follows the paper's W + BA layout: A is (rank, in_dim) and B is (out_dim, rank), forward x @ A.T @ B.T.
# keywords: (in_dim, rank)
class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(rank, in_dim))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(out_dim, rank))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A.T @ self.B.T)
