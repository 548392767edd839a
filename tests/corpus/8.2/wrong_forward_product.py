# expect: wrong
# mistake: multiplies the two outputs, linear(x) * lora(x), instead of adding them: zero right after construction.
# keywords: multiplies
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) * self.lora(x)
