# expect: correct
# mistake: none (loops over a list of model.modules() and, in each, over a list of its direct children)
def replace_linear_with_lora(model, rank, alpha):
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                module.add_module(name, LinearWithLoRA(child, rank, alpha))
