# expect: wrong
# mistake: hands the tensor itself to tokenizer.decode (after squeeze(0)) instead of a list of ints (.tolist()); tiktoken refuses a tensor.
# keywords: tolist, list
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze(0)
    return tokenizer.decode(flat)
