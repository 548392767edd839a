# expect: wrong
# mistake: uses tokenizer.encode_ordinary(text), which treats <|endoftext|> as plain text and splits it into several ordinary tokens instead of the single id 50256.
# keywords: endoftext, special, 50256, allowed_special
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode_ordinary(text)
    return torch.tensor(encoded).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat.tolist())
