# expect: wrong
# mistake: passes the whole sequence to the model at every step, without cropping it to the last context_size tokens.
# keywords: crop
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx)
        logits = logits[:, -1, :]
        if temperature == 0.0:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        else:
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            probs = softmax_with_temperature(logits, temperature)
            idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
        if eos_id is not None:
            done = done | (idx_next[:, 0] == eos_id)
            if done.all():
                break
    return idx
