# expect: wrong
# mistake: uses the sigmoid approximation x * sigmoid(1.702 x) instead of the tanh approximation.
# keywords: tanh, approximation
class GELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)
