# expect: wrong
# mistake: feeds the whole sequence to the model every step, model(idx), without cropping it to the last context_size tokens (fails once the sequence is longer than the model's context).
# keywords: crop, context_size, last
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
