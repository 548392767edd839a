# expect: wrong
# mistake: wraps every child that has a weight (LayerNorm and Embedding too), not only nn.Linear.
# keywords: only the nn.Linear
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if hasattr(module, "weight"):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)
