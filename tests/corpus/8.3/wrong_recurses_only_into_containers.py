# expect: wrong
# mistake: recurses only into nn.Sequential and nn.ModuleList, not into other blocks: the layers held as attributes of a block stay unwrapped.
# keywords: every child that is not an nn.Linear
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        elif isinstance(module, (nn.Sequential, nn.ModuleList)):
            replace_linear_with_lora(module, rank, alpha)
