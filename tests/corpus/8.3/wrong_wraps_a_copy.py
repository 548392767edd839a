# expect: wrong
# mistake: wraps a new nn.Linear with the layer's weights loaded (a copy) instead of the layer itself.
# keywords: copy of the layer
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            new_linear = nn.Linear(module.in_features, module.out_features, bias=module.bias is not None)
            new_linear.load_state_dict(module.state_dict())
            setattr(model, name, LinearWithLoRA(new_linear, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)
