# expect: wrong
# mistake: applies the LoRA update to the wrapped layer's output, y + lora(y) with a LoRALayer(out, out), instead of to the input x.
# keywords: from the input x
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.out_features, linear.out_features, rank, alpha)

    def forward(self, x):
        y = self.linear(x)
        return y + self.lora(y)
