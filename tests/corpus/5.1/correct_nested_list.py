# expect: correct
# mistake: none (torch.tensor of a one-element list of lists for the batch dimension, allowed_special="all", decodes row 0)
def text_to_token_ids(text, tokenizer):
    return torch.tensor([tokenizer.encode(text, allowed_special="all")])


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids[0].tolist())
