# expect: wrong
# mistake: replaces only the model's direct children: no recursion into blocks, Sequential or ModuleList.
# keywords: recurse
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
