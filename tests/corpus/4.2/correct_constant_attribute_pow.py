# expect: correct
# mistake: none (the constant sqrt(2/pi) precomputed in __init__, torch.pow for the cube)
class GELU(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = math.sqrt(2.0 / math.pi)

    def forward(self, x):
        inner = self.c * (x + 0.044715 * torch.pow(x, 3))
        return 0.5 * x * (1.0 + torch.tanh(inner))
