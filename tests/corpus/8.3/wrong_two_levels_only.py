# expect: wrong
# mistake: two nested loops instead of recursion: children and grandchildren are wrapped, deeper layers are not.
# keywords: recurse
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            for sub_name, sub_module in module.named_children():
                if isinstance(sub_module, nn.Linear):
                    setattr(module, sub_name, LinearWithLoRA(sub_module, rank, alpha))
