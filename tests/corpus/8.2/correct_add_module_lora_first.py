# expect: correct
# mistake: none (registers both with add_module, the LoRA layer first; forward adds the update to the base output)
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.add_module("lora", LoRALayer(linear.in_features, linear.out_features, rank, alpha))
        self.add_module("linear", linear)

    def forward(self, x):
        update = self.lora(x)
        return update + self.linear(x)
