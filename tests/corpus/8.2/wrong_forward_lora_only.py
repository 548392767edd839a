# expect: wrong
# mistake: forward returns only the LoRA update, lora(x), without the wrapped layer's output.
# keywords: only the update
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.lora(x)
