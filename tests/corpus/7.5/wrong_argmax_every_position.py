# expect: wrong
# mistake: takes the argmax over the logits of every position at once (no dim), then the class of whichever position scored highest, instead of the last position's argmax.
# keywords: at once, last position, [:, -1, :]
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    model.eval()
    input_ids = tokenizer.encode(text)
    supported_context_length = model.pos_emb.weight.shape[0]
    length = min(max_length, supported_context_length)
    input_ids = input_ids[:length]
    input_ids += [pad_token_id] * (length - len(input_ids))
    input_tensor = torch.tensor(input_ids, device=device).unsqueeze(0)
    with torch.no_grad():
        logits = model(input_tensor)[0]
    predicted_label = torch.argmax(logits).item() % logits.shape[-1]
    return "spam" if predicted_label == 1 else "not spam"
