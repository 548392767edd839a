# expect: wrong
# mistake: forgets the factor 0.5, returning x * (1 + tanh(...)), twice the GELU.
# keywords: 0.5, half
class GELU(nn.Module):
    def forward(self, x):
        return x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
