# expect: wrong
# mistake: uses sqrt(pi / 2) instead of sqrt(2 / pi) (the fraction upside down).
# keywords: sqrt, 2/pi, 2 / pi
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(math.pi / 2.0) * (x + 0.044715 * x**3)))
