# expect: correct
# mistake: none (pads with `length` pad ids and slices, which cuts and pads in one step; looks the answer up in a list of the two labels)
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    labels = ["not spam", "spam"]
    model.eval()
    length = min(max_length, model.pos_emb.weight.size(0))
    ids = (tokenizer.encode(text) + [pad_token_id] * length)[:length]
    with torch.no_grad():
        logits = model(torch.tensor(ids, device=device)[None, :])
    return labels[int(logits[:, -1, :].argmax(dim=-1)[0])]
