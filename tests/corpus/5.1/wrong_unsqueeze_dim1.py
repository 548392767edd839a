# expect: wrong
# mistake: adds the new dimension at the end with unsqueeze(1), giving shape (num_tokens, 1) instead of (1, num_tokens).
# keywords: shape, unsqueeze(0), batch
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded).unsqueeze(1)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat.tolist())
