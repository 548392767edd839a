# expect: correct
# mistake: none (recurses into every child first, then wraps the child if it is an nn.Linear: recursing into a Linear does nothing)
def replace_linear_with_lora(model, rank, alpha):
    for name, child in model.named_children():
        replace_linear_with_lora(child, rank, alpha)
        if isinstance(child, nn.Linear):
            setattr(model, name, LinearWithLoRA(child, rank, alpha))
