# expect: wrong
# mistake: picks the layers to wrap by GPTModel's attribute names (att, ff, out_head): on another model nothing is wrapped, and the layers it does wrap are put in the right place.
# keywords: which modules your code picks, whatever its name
# absent: it looks like
def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear) and name in ("out_head", "W_query", "W_key", "W_value", "out_proj"):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)
