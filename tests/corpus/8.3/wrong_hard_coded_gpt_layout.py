# expect: wrong
# mistake: walks GPTModel's own attributes (trf_blocks, att, ff, out_head) instead of the children of any model.
# keywords: any model
def replace_linear_with_lora(model, rank, alpha):
    for block in model.trf_blocks:
        for name in ("W_query", "W_key", "W_value", "out_proj"):
            setattr(block.att, name, LinearWithLoRA(getattr(block.att, name), rank, alpha))
        for i, layer in enumerate(block.ff.layers):
            if isinstance(layer, nn.Linear):
                block.ff.layers[i] = LinearWithLoRA(layer, rank, alpha)
    model.out_head = LinearWithLoRA(model.out_head, rank, alpha)
