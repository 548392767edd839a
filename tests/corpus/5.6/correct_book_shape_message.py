# expect: correct
# mistake: none (the book's assign(left, right), which raises ValueError(f"Shape mismatch. Left: ..., Right: ...") naming the shapes but not the tensor: the contract asks for an exception, and naming the tensor is only advice)
def assign(left, right):
    if left.shape != right.shape:
        raise ValueError(f"Shape mismatch. Left: {left.shape}, Right: {right.shape}")
    return torch.nn.Parameter(right.clone().detach())


def load_weights_into_gpt(gpt, state_dict):
    sd = state_dict
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, sd["wpe.weight"])
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, sd["wte.weight"])

    for b in range(len(gpt.trf_blocks)):
        block = gpt.trf_blocks[b]
        p = f"h.{b}."

        q_w, k_w, v_w = torch.chunk(sd[p + "attn.c_attn.weight"], 3, dim=-1)
        block.att.W_query.weight = assign(block.att.W_query.weight, q_w.T)
        block.att.W_key.weight = assign(block.att.W_key.weight, k_w.T)
        block.att.W_value.weight = assign(block.att.W_value.weight, v_w.T)

        q_b, k_b, v_b = torch.chunk(sd[p + "attn.c_attn.bias"], 3, dim=-1)
        block.att.W_query.bias = assign(block.att.W_query.bias, q_b)
        block.att.W_key.bias = assign(block.att.W_key.bias, k_b)
        block.att.W_value.bias = assign(block.att.W_value.bias, v_b)

        block.att.out_proj.weight = assign(block.att.out_proj.weight, sd[p + "attn.c_proj.weight"].T)
        block.att.out_proj.bias = assign(block.att.out_proj.bias, sd[p + "attn.c_proj.bias"])

        block.ff.layers[0].weight = assign(block.ff.layers[0].weight, sd[p + "mlp.c_fc.weight"].T)
        block.ff.layers[0].bias = assign(block.ff.layers[0].bias, sd[p + "mlp.c_fc.bias"])
        block.ff.layers[2].weight = assign(block.ff.layers[2].weight, sd[p + "mlp.c_proj.weight"].T)
        block.ff.layers[2].bias = assign(block.ff.layers[2].bias, sd[p + "mlp.c_proj.bias"])

        block.norm1.scale = assign(block.norm1.scale, sd[p + "ln_1.weight"])
        block.norm1.shift = assign(block.norm1.shift, sd[p + "ln_1.bias"])
        block.norm2.scale = assign(block.norm2.scale, sd[p + "ln_2.weight"])
        block.norm2.shift = assign(block.norm2.shift, sd[p + "ln_2.bias"])

    gpt.final_norm.scale = assign(gpt.final_norm.scale, sd["ln_f.weight"])
    gpt.final_norm.shift = assign(gpt.final_norm.shift, sd["ln_f.bias"])
    gpt.out_head.weight = assign(gpt.out_head.weight, sd["wte.weight"])
