# expect: wrong
# mistake: sets requires_grad=True on the wrapped layer too ("make the new layer trainable"): the pretrained weights are trained again.
# keywords: too many are trainable, requires_grad
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            new_layer = LinearWithLoRA(module, rank, alpha)
            new_layer.requires_grad_(True)
            setattr(model, name, new_layer)
        else:
            replace_linear_with_lora(module, rank, alpha)
