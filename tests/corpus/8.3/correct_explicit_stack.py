# expect: correct
# mistake: none (an explicit stack of modules instead of recursion; type(child) is nn.Linear; returns the model as well)
def replace_linear_with_lora(model, rank, alpha):
    stack = [model]
    while stack:
        module = stack.pop()
        for name, child in list(module.named_children()):
            if type(child) is nn.Linear:
                setattr(module, name, LinearWithLoRA(child, rank, alpha))
            else:
                stack.append(child)
    return model
