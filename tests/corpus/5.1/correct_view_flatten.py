# expect: correct
# mistake: none (explicit dtype=torch.long and view(1, -1); flattens the (1, num_tokens) tensor before decoding)
def text_to_token_ids(text, tokenizer):
    ids = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(ids, dtype=torch.long).view(1, -1)


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids.flatten().tolist())
