# expect: wrong
# mistake: multiplies the LoRA output by alpha once more, although LoRALayer already scales by alpha.
# keywords: alpha twice
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)
        self.alpha = alpha

    def forward(self, x):
        return self.linear(x) + self.alpha * self.lora(x)
