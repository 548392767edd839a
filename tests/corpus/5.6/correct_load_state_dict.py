# expect: correct
# mistake: none (renames the checkpoint into our parameter names and calls gpt.load_state_dict, whose size-mismatch error names the parameter; q, k, v via split(emb, dim=1))
def assign(param, values, name):
    if param.shape != values.shape:
        raise ValueError(f"Shape mismatch for {name}: {tuple(param.shape)} vs {tuple(values.shape)}")
    return nn.Parameter(values.clone())


def load_weights_into_gpt(gpt, state_dict):
    emb = gpt.tok_emb.weight.shape[1]
    new = {"tok_emb.weight": state_dict["wte.weight"],
           "pos_emb.weight": state_dict["wpe.weight"],
           "final_norm.scale": state_dict["ln_f.weight"],
           "final_norm.shift": state_dict["ln_f.bias"],
           "out_head.weight": state_dict["wte.weight"]}
    for b in range(len(gpt.trf_blocks)):
        h, t = f"h.{b}.", f"trf_blocks.{b}."
        q, k, v = state_dict[h + "attn.c_attn.weight"].split(emb, dim=1)
        qb, kb, vb = state_dict[h + "attn.c_attn.bias"].split(emb, dim=0)
        new.update({
            t + "att.W_query.weight": q.T, t + "att.W_key.weight": k.T, t + "att.W_value.weight": v.T,
            t + "att.W_query.bias": qb, t + "att.W_key.bias": kb, t + "att.W_value.bias": vb,
            t + "att.out_proj.weight": state_dict[h + "attn.c_proj.weight"].T,
            t + "att.out_proj.bias": state_dict[h + "attn.c_proj.bias"],
            t + "ff.layers.0.weight": state_dict[h + "mlp.c_fc.weight"].T,
            t + "ff.layers.0.bias": state_dict[h + "mlp.c_fc.bias"],
            t + "ff.layers.2.weight": state_dict[h + "mlp.c_proj.weight"].T,
            t + "ff.layers.2.bias": state_dict[h + "mlp.c_proj.bias"],
            t + "norm1.scale": state_dict[h + "ln_1.weight"], t + "norm1.shift": state_dict[h + "ln_1.bias"],
            t + "norm2.scale": state_dict[h + "ln_2.weight"], t + "norm2.shift": state_dict[h + "ln_2.bias"],
        })
    missing = set(name for name, _ in gpt.named_parameters()) - set(new)
    assert not missing, f"no weights for {sorted(missing)}"
    # strict=False: the model's causal-mask buffers are not in the checkpoint
    gpt.load_state_dict(new, strict=False)
