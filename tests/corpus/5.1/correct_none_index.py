# expect: correct
# mistake: none (torch.as_tensor with [None, :] for the batch dimension; decodes a list of Python ints built from the first row)
def text_to_token_ids(text, tokenizer):
    ids = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.as_tensor(ids, dtype=torch.int64)[None, :]


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode([int(i) for i in token_ids[0]])
