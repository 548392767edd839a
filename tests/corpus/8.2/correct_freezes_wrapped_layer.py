# expect: correct
# mistake: none (also freezes the wrapped layer's parameters in __init__: the contract leaves requires_grad of the layer given open)
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        for param in self.linear.parameters():
            param.requires_grad = False  # only the LoRA update is trained
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
