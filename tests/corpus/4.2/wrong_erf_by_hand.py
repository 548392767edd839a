# expect: wrong
# mistake: writes the exact GELU, 0.5 x (1 + erf(x / sqrt(2))), instead of the tanh approximation.
# keywords: tanh, approximation, erf
class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0)))
