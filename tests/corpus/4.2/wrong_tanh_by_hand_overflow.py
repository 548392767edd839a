# expect: wrong
# mistake: writes tanh by hand as (e^u - e^-u) / (e^u + e^-u): for inputs above about 13 (or below -13) in float32 exp overflows, inf / inf is NaN, and GELU returns NaN where it should be about x (or 0).
# keywords: overflow, torch.tanh
class GELU(nn.Module):
    def forward(self, x):
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
        tanh_u = (torch.exp(u) - torch.exp(-u)) / (torch.exp(u) + torch.exp(-u))
        return 0.5 * x * (1 + tanh_u)
