# expect: correct
# mistake: none (book-style end token: stops before appending the eos that finishes the last row, so the result is one token shorter than the reference's)
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    seen_eos = torch.zeros(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]

        if top_k is not None and temperature > 0.0:
            logits = top_k_logits(logits, top_k)
        if top_p is not None and temperature > 0.0:
            logits = top_p_logits(logits, top_p)

        if temperature > 0.0:
            probs = softmax_with_temperature(logits, temperature)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)

        if eos_id is not None:
            seen_eos = seen_eos | (idx_next == eos_id)
            if seen_eos.all():  # every row has its end token: stop, without appending this one
                break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
