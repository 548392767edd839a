# expect: correct
# mistake: none (the same function through the identity 0.5 (1 + tanh(z)) = sigmoid(2 z), cube as x * x * x)
class GELU(nn.Module):
    def forward(self, x):
        z = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return x * torch.sigmoid(2.0 * z)
