# expect: wrong
# mistake: builds the LoRALayer with in_features and out_features swapped: LoRALayer(out_features, in_features, ...).
# keywords: LoRALayer(linear.in_features, linear.out_features
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.out_features, linear.in_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
