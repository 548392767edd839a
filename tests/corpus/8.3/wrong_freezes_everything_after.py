# expect: wrong
# mistake: freezes every parameter of the model after the replacement, the new A and B included: nothing is left to train.
# keywords: no parameter is trainable, don't freeze
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)
    for param in model.parameters():
        param.requires_grad = False
