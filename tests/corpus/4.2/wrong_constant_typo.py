# expect: wrong
# mistake: mistypes the cubic coefficient as 0.44715 instead of 0.044715.
# keywords: 0.044715, coefficient, constant
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.44715 * x**3)))
