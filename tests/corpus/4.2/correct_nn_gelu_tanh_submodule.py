# expect: correct
# mistake: none (holds nn.GELU(approximate="tanh") as a submodule)
class GELU(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(x)
