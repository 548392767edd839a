# expect: correct
# mistake: none (a (1, length) tensor filled with pad_token_id on device, the first ids copied into it; torch.inference_mode)
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    model.eval()
    length = min(max_length, model.pos_emb.weight.shape[0])
    ids = tokenizer.encode(text)[:length]
    batch = torch.full((1, length), pad_token_id, dtype=torch.long, device=device)
    batch[0, :len(ids)] = torch.tensor(ids, dtype=torch.long, device=device)
    with torch.inference_mode():
        last_logits = model(batch)[0, -1, :]
    return "spam" if torch.argmax(last_logits).item() == 1 else "not spam"
