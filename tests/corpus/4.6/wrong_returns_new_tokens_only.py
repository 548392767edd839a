# expect: wrong
# mistake: collects the generated tokens in a separate tensor and returns only those, not the input followed by them.
# keywords: input, whole sequence, new tokens
def generate_text_simple(model, idx, max_new_tokens, context_size):
    generated = idx[:, :0]
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
        generated = torch.cat((generated, idx_next), dim=1)
    return generated
