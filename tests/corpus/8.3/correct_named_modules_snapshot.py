# expect: correct
# mistake: none (collects the nn.Linear layers from a list of named_modules() first, then puts each wrapper in its parent found with get_submodule)
def replace_linear_with_lora(model, rank, alpha):
    targets = [(name, module) for name, module in model.named_modules() if isinstance(module, nn.Linear)]
    for name, module in targets:
        parent_name, _, child_name = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child_name, LinearWithLoRA(module, rank, alpha))
