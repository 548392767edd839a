# expect: wrong
# mistake: returns torch.tensor(encoded), a 1-D tensor of shape (num_tokens,), without adding the batch dimension with unsqueeze(0).
# keywords: batch, unsqueeze, num_tokens
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat.tolist())
