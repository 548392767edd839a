# expect: wrong
# mistake: assigns the wrapper to the loop variable of model.modules(): the model itself never changes.
# keywords: in place, loop variable
# absent: recurse
def replace_linear_with_lora(model, rank, alpha):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module = LinearWithLoRA(module, rank, alpha)
