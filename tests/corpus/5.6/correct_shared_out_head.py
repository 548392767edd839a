# expect: correct
# mistake: none (true weight tying: out_head.weight is the same Parameter as tok_emb.weight; the rest as the book, with torch.split and .t())
def assign(param, values, name):
    if param.shape != values.shape:
        raise ValueError(f"wrong shape for {name}: the model has {tuple(param.shape)}, "
                         f"the checkpoint {tuple(values.shape)}")
    return torch.nn.Parameter(values.detach().clone())


def load_weights_into_gpt(gpt, state_dict):
    sd = state_dict
    emb = gpt.tok_emb.weight.shape[1]
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, sd["wpe.weight"], "wpe.weight")
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, sd["wte.weight"], "wte.weight")
    for b, block in enumerate(gpt.trf_blocks):
        h = f"h.{b}"
        q_w, k_w, v_w = torch.split(sd[f"{h}.attn.c_attn.weight"], emb, dim=-1)
        q_b, k_b, v_b = torch.split(sd[f"{h}.attn.c_attn.bias"], emb, dim=-1)
        for lin, w, bias, what in ((block.att.W_query, q_w, q_b, "query"), (block.att.W_key, k_w, k_b, "key"),
                                   (block.att.W_value, v_w, v_b, "value")):
            lin.weight = assign(lin.weight, w.t(), f"{h}.attn.c_attn.weight ({what})")
            lin.bias = assign(lin.bias, bias, f"{h}.attn.c_attn.bias ({what})")
        for lin, name in ((block.att.out_proj, "attn.c_proj"), (block.ff.layers[0], "mlp.c_fc"),
                          (block.ff.layers[2], "mlp.c_proj")):
            lin.weight = assign(lin.weight, sd[f"{h}.{name}.weight"].t(), f"{h}.{name}.weight")
            lin.bias = assign(lin.bias, sd[f"{h}.{name}.bias"], f"{h}.{name}.bias")
        block.norm1.scale = assign(block.norm1.scale, sd[f"{h}.ln_1.weight"], f"{h}.ln_1.weight")
        block.norm1.shift = assign(block.norm1.shift, sd[f"{h}.ln_1.bias"], f"{h}.ln_1.bias")
        block.norm2.scale = assign(block.norm2.scale, sd[f"{h}.ln_2.weight"], f"{h}.ln_2.weight")
        block.norm2.shift = assign(block.norm2.shift, sd[f"{h}.ln_2.bias"], f"{h}.ln_2.bias")
    gpt.final_norm.scale = assign(gpt.final_norm.scale, sd["ln_f.weight"], "ln_f.weight")
    gpt.final_norm.shift = assign(gpt.final_norm.shift, sd["ln_f.bias"], "ln_f.bias")
    if gpt.out_head.weight.shape != gpt.tok_emb.weight.shape:
        raise ValueError("out_head.weight and wte.weight differ in shape")
    gpt.out_head.weight = gpt.tok_emb.weight  # GPT-2 ties the output head to the token embedding
