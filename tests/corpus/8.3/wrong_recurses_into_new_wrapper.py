# expect: wrong
# mistake: wraps the Linear, then recurses into getattr(model, name), the new LinearWithLoRA: its own linear gets wrapped again and again (RecursionError).
# keywords: recursion never ends
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        replace_linear_with_lora(getattr(model, name), rank, alpha)
