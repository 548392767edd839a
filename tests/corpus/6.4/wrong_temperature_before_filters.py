# expect: wrong
# mistake: divides the logits by the temperature first and filters the scaled logits with top-k and top-p: top-p then sees the flattened (or sharpened) distribution and keeps another set of tokens.
# keywords: temperature is applied before, filter the logits first
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if temperature > 0.0:
            logits = logits / temperature
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, idx_next], dim=1)
        if eos_id is not None:
            finished |= idx_next.squeeze(-1) == eos_id
            if finished.all():
                break
    return idx
