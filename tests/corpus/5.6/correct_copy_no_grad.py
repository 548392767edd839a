# expect: correct
# mistake: none (copies in place with param.copy_() under torch.no_grad() instead of replacing the Parameters; query, key and value sliced out of c_attn by column ranges)
def assign(param, values, name):
    if tuple(param.shape) != tuple(values.shape):
        raise ValueError(f"{name}: expected shape {tuple(param.shape)}, got {tuple(values.shape)}")
    with torch.no_grad():
        param.copy_(values)
    return param


def load_weights_into_gpt(gpt, state_dict):
    emb = gpt.tok_emb.weight.shape[1]
    assign(gpt.tok_emb.weight, state_dict["wte.weight"], "wte.weight")
    assign(gpt.pos_emb.weight, state_dict["wpe.weight"], "wpe.weight")
    for i, block in enumerate(gpt.trf_blocks):
        def get(key):
            return f"h.{i}.{key}", state_dict[f"h.{i}.{key}"]

        key, w = get("attn.c_attn.weight")
        _, bias = get("attn.c_attn.bias")
        for j, layer in enumerate((block.att.W_query, block.att.W_key, block.att.W_value)):
            cols = slice(j * emb, (j + 1) * emb)
            assign(layer.weight, w[:, cols].t(), key)
            assign(layer.bias, bias[cols], key.replace("weight", "bias"))
        for layer, name in ((block.att.out_proj, "attn.c_proj"), (block.ff.layers[0], "mlp.c_fc"),
                            (block.ff.layers[2], "mlp.c_proj")):
            key, w = get(name + ".weight")
            assign(layer.weight, w.t(), key)
            key, b = get(name + ".bias")
            assign(layer.bias, b, key)
        for norm, name in ((block.norm1, "ln_1"), (block.norm2, "ln_2")):
            key, w = get(name + ".weight")
            assign(norm.scale, w, key)
            key, b = get(name + ".bias")
            assign(norm.shift, b, key)
    assign(gpt.final_norm.scale, state_dict["ln_f.weight"], "ln_f.weight")
    assign(gpt.final_norm.shift, state_dict["ln_f.bias"], "ln_f.bias")
    assign(gpt.out_head.weight, state_dict["wte.weight"], "wte.weight (out_head)")
