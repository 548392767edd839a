# expect: correct
# mistake: none (the function itself is decorated with @torch.no_grad(); the length from model.pos_emb.num_embeddings; a tensor moved with .to(device); argmax over the last token's logits without .item())
@torch.no_grad()
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    model.eval()
    length = min(max_length, model.pos_emb.num_embeddings)
    ids = tokenizer.encode(text)[:length]
    ids = ids + [pad_token_id] * (length - len(ids))
    x = torch.tensor([ids], dtype=torch.long).to(device)
    prediction = model(x)[0, -1].argmax()
    return "spam" if prediction == 1 else "not spam"
