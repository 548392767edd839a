# expect: wrong
# mistake: uses list(set(tokens)) and forgets sorted(...), so the ids follow the set's arbitrary iteration order instead of the sorted order.
# keywords: sorted, sort
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = list(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
