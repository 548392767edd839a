# expect: wrong
# mistake: unpacks the three parts of c_attn in the order key, query, value instead of query, key, value.
# keywords: query, order
# absent: untransposed
def assign(param, values, name):
    if param.shape != values.shape:
        raise ValueError(f"Shape mismatch for {name}: model {tuple(param.shape)}, checkpoint {tuple(values.shape)}")
    return torch.nn.Parameter(values.clone().detach())


def load_weights_into_gpt(gpt, state_dict):
    sd = state_dict
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, sd["wpe.weight"], "wpe.weight")
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, sd["wte.weight"], "wte.weight")

    for b in range(len(gpt.trf_blocks)):
        block = gpt.trf_blocks[b]
        p = f"h.{b}."

        k_w, q_w, v_w = torch.chunk(sd[p + "attn.c_attn.weight"], 3, dim=-1)
        block.att.W_query.weight = assign(block.att.W_query.weight, q_w.T, p + "attn.c_attn.weight")
        block.att.W_key.weight = assign(block.att.W_key.weight, k_w.T, p + "attn.c_attn.weight")
        block.att.W_value.weight = assign(block.att.W_value.weight, v_w.T, p + "attn.c_attn.weight")

        k_b, q_b, v_b = torch.chunk(sd[p + "attn.c_attn.bias"], 3, dim=-1)
        block.att.W_query.bias = assign(block.att.W_query.bias, q_b, p + "attn.c_attn.bias")
        block.att.W_key.bias = assign(block.att.W_key.bias, k_b, p + "attn.c_attn.bias")
        block.att.W_value.bias = assign(block.att.W_value.bias, v_b, p + "attn.c_attn.bias")

        block.att.out_proj.weight = assign(block.att.out_proj.weight, sd[p + "attn.c_proj.weight"].T, p + "attn.c_proj.weight")
        block.att.out_proj.bias = assign(block.att.out_proj.bias, sd[p + "attn.c_proj.bias"], p + "attn.c_proj.bias")

        block.ff.layers[0].weight = assign(block.ff.layers[0].weight, sd[p + "mlp.c_fc.weight"].T, p + "mlp.c_fc.weight")
        block.ff.layers[0].bias = assign(block.ff.layers[0].bias, sd[p + "mlp.c_fc.bias"], p + "mlp.c_fc.bias")
        block.ff.layers[2].weight = assign(block.ff.layers[2].weight, sd[p + "mlp.c_proj.weight"].T, p + "mlp.c_proj.weight")
        block.ff.layers[2].bias = assign(block.ff.layers[2].bias, sd[p + "mlp.c_proj.bias"], p + "mlp.c_proj.bias")

        block.norm1.scale = assign(block.norm1.scale, sd[p + "ln_1.weight"], p + "ln_1.weight")
        block.norm1.shift = assign(block.norm1.shift, sd[p + "ln_1.bias"], p + "ln_1.bias")
        block.norm2.scale = assign(block.norm2.scale, sd[p + "ln_2.weight"], p + "ln_2.weight")
        block.norm2.shift = assign(block.norm2.shift, sd[p + "ln_2.bias"], p + "ln_2.bias")

    gpt.final_norm.scale = assign(gpt.final_norm.scale, sd["ln_f.weight"], "ln_f.weight")
    gpt.final_norm.shift = assign(gpt.final_norm.shift, sd["ln_f.bias"], "ln_f.bias")
    gpt.out_head.weight = assign(gpt.out_head.weight, sd["wte.weight"], "wte.weight")
