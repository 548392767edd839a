# expect: wrong
# mistake: sorts the unique tokens with key=len (shortest first, to "keep punctuation first"), which is not the plain sorted order the contract asks for.
# keywords: sorted, order
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(set(preprocessed), key=len)
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
