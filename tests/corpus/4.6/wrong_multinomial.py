# expect: wrong
# mistake: samples the next token with torch.multinomial(softmax(logits), 1) instead of taking the argmax (greedy decoding).
# keywords: argmax, greedy
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
