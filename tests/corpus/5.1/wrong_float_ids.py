# expect: wrong
# mistake: builds the tensor with dtype=torch.float32, but token ids must be integers (torch.long) for the embedding lookup.
# keywords: dtype, torch.long, int64
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded, dtype=torch.float32).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat.tolist())
