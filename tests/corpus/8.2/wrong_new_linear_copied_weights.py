# expect: wrong
# mistake: builds a new nn.Linear of the same sizes and loads the given layer's state_dict into it: a copy, not the layer given.
# keywords: self.linear = linear, copy
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = nn.Linear(linear.in_features, linear.out_features, bias=linear.bias is not None)
        self.linear.load_state_dict(linear.state_dict())
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
