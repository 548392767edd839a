# expect: correct
# mistake: none (keeps the new tokens in a list and concatenates once at the end; the context is cropped from the tokens seen so far)
def generate_text_simple(model, idx, max_new_tokens, context_size):
    new_tokens = []
    context = idx
    for _ in range(max_new_tokens):
        context = context[:, -context_size:]
        with torch.no_grad():
            logits = model(context)
        next_token = torch.argmax(logits[:, -1, :], dim=-1).unsqueeze(1)
        new_tokens.append(next_token)
        context = torch.cat((context, next_token), dim=1)
    return torch.cat([idx] + new_tokens, dim=1)
