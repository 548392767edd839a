# expect: wrong
# mistake: holds an nn.GELU() submodule, which defaults to the exact erf form, not approximate="tanh".
# keywords: tanh, approximate, erf
class GELU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = nn.GELU()

    def forward(self, x):
        return self.gelu(x)
