# expect: wrong
# mistake: returns torch.relu(x) ("GELU is a smooth ReLU") instead of GELU's tanh formula.
# keywords: tanh, relu, negative
class GELU(nn.Module):
    def forward(self, x):
        return torch.relu(x)
