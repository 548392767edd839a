# expect: wrong
# mistake: never calls model.eval(): a classifier used right after training keeps dropout on and can label the same message differently from call to call.
# keywords: model.eval(), train mode
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    """"spam" or "not spam" for one message, from the last token's logits of a classifier GPT."""
    input_ids = tokenizer.encode(text)
    length = min(max_length, model.pos_emb.weight.shape[0])  # never past the model's context
    input_ids = input_ids[:length]
    input_ids = input_ids + [pad_token_id] * (length - len(input_ids))
    input_tensor = torch.tensor(input_ids, device=device).unsqueeze(0)  # a batch of one
    with torch.no_grad():
        logits = model(input_tensor)[:, -1, :]
    predicted = torch.argmax(logits, dim=-1).item()
    return "spam" if predicted == 1 else "not spam"
