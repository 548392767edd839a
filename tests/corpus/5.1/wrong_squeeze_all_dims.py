# expect: wrong
# mistake: removes the batch dimension with squeeze() (every size-1 dimension), so a batch of one single token becomes a 0-d tensor, .tolist() gives an int and decode fails.
# keywords: squeeze(0), single token, one token
def text_to_token_ids(text, tokenizer):
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(encoded).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    flat = token_ids.squeeze()
    return tokenizer.decode(flat.tolist())
