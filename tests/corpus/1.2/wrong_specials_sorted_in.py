# expect: wrong
# mistake: adds the special tokens to the set before sorting, so they land among the other tokens ('<' sorts before the letters) instead of at the end.
# keywords: special tokens, sort, append
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    tokens = set(preprocessed)
    tokens.update(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(sorted(tokens))}
