# expect: wrong
# mistake: calls LinearWithLoRA(module, alpha, rank): the rank and alpha arguments in the wrong order.
# keywords: order of the arguments
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, alpha, rank))
        else:
            replace_linear_with_lora(module, rank, alpha)
