# expect: correct
# mistake: none (@torch.no_grad() decorator; finished = any eos among the new tokens of each row)
@torch.no_grad()
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    start = idx.shape[1]
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])[:, -1, :]
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            nxt = softmax_with_temperature(logits, temperature).multinomial(1)
        idx = torch.cat([idx, nxt], dim=-1)
        if eos_id is not None and (idx[:, start:] == eos_id).any(dim=1).all():
            break
    return idx
