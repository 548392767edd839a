# expect: wrong
# mistake: returns 0.5 * (1 + tanh(...)), the gate alone, forgetting to multiply it by x.
# keywords: multiply, times x, 0.5 x, 0.5 * x
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
