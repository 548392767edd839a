# expect: wrong
# mistake: checks the whole sequence, prompt included, for eos_id, so a row whose prompt already holds the end token counts as finished before it produced one.
# keywords: only the tokens generate adds, counts as produced
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
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
        if eos_id is not None and (idx == eos_id).any(dim=1).all():
            break
    return idx
