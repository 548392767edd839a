# expect: wrong
# mistake: writes the constant as sqrt(2 * pi) (the normal density's constant) instead of sqrt(2 / pi).
# keywords: sqrt(2 * pi)
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 * math.pi) * (x + 0.044715 * torch.pow(x, 3))))
