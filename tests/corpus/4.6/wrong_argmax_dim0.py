# expect: wrong
# mistake: takes the argmax over dim=0 (across the batch) instead of over the vocabulary (dim=-1).
# keywords: dim=-1, vocabulary, argmax
# neighbour-of: wrong_no_keepdim_view
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=0, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
