# expect: wrong
# mistake: multiplies by 2 / pi instead of sqrt(2 / pi).
# keywords: sqrt, square root, 2/pi
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh((2.0 / math.pi) * (x + 0.044715 * x**3)))
