# expect: wrong
# mistake: loops over model.modules() (a live generator, not a list) and replaces children while walking: the walk enters every new LinearWithLoRA and wraps its linear again, without end.
# keywords: list(model.modules())
def replace_linear_with_lora(model, rank, alpha):
    for module in model.modules():
        for name, child in module.named_children():
            if isinstance(child, nn.Linear):
                setattr(module, name, LinearWithLoRA(child, rank, alpha))
