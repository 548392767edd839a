# expect: wrong
# mistake: calls math.tanh on a tensor, which only works for a single number (a TypeError for any larger tensor).
# keywords: math.tanh, torch.tanh
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
