# expect: wrong
# mistake: crops the context to the first context_size tokens (idx[:, :context_size]) instead of the last ones
# keywords: cropped to its first, idx[:, -context_size:]
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        idx_cond = idx[:, :context_size]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if temperature == 0.0:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        else:
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            idx_next = torch.multinomial(softmax_with_temperature(logits, temperature), num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
        if eos_id is not None:
            finished |= idx_next.squeeze(1) == eos_id
            if finished.all():
                break
    return idx
