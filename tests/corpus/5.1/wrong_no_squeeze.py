# expect: wrong
# mistake: decodes token_ids.tolist() without removing the batch dimension, so tokenizer.decode gets a list of lists.
# keywords: squeeze, batch
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids.tolist())
