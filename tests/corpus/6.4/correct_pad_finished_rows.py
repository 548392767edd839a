# expect: correct
# mistake: none (a row that has produced eos_id gets eos_id again at every later step, as padding, until all rows have)
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    model_was_training = model.training
    finished = idx.new_zeros(idx.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(idx[:, -context_size:])[:, -1, :]
            if temperature == 0.0:
                next_ids = logits.argmax(dim=-1)
            else:
                if top_k is not None:
                    logits = top_k_logits(logits, top_k)
                if top_p is not None:
                    logits = top_p_logits(logits, top_p)
                next_ids = torch.multinomial(softmax_with_temperature(logits, temperature), 1).squeeze(1)
            if eos_id is not None:
                next_ids = torch.where(finished, torch.full_like(next_ids, eos_id), next_ids)
                finished = finished | (next_ids == eos_id)
            idx = torch.cat((idx, next_ids[:, None]), dim=1)
            if eos_id is not None and bool(finished.all()):
                break
    model.train(model_was_training)
    return idx
