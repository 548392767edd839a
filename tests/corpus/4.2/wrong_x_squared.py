# expect: wrong
# mistake: uses 0.044715 * x**2 instead of 0.044715 * x**3 inside the tanh.
# keywords: x^3, x**3, cube, cubic
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**2)))
