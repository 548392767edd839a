# expect: wrong
# mistake: applies the softmax to the full logits over dim=1 (the token positions) before taking the last position, so each vocabulary entry is normalized across positions and the argmax no longer picks the largest logit of the last position.
# keywords: softmax, dim, last
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        probas = torch.softmax(logits, dim=1)
        probas = probas[:, -1, :]
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
