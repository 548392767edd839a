# expect: correct
# mistake: none (the whole loop under torch.inference_mode())
def generate_text_simple(model, idx, max_new_tokens, context_size):
    with torch.inference_mode():
        for _ in range(max_new_tokens):
            logits = model(idx[:, -context_size:])
            next_token = logits[:, -1].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, next_token], dim=-1)
    return idx
