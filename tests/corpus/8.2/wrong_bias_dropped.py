# expect: wrong
# mistake: recomputes the wrapped layer as x @ linear.weight.T and forgets its bias.
# keywords: bias is missing
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return x @ self.linear.weight.T + self.lora(x)
