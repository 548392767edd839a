# expect: wrong
# mistake: walks model.named_modules() and calls setattr(model, "blocks.0.up", ...) on the model itself: that adds new children with dotted names and leaves the nested layers where they were.
# keywords: dotted, get_submodule
def replace_linear_with_lora(model, rank, alpha):
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
