# expect: wrong
# mistake: calls tokenizer.encode(text) without allowed_special, so tiktoken refuses any text that contains <|endoftext|>.
# keywords: allowed_special, endoftext
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text)
    encoded_tensor = torch.tensor(encoded).unsqueeze(0)
    return encoded_tensor


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat.tolist())
