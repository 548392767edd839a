# expect: wrong
# mistake: strips every piece but forgets the `if item.strip()` filter, so the empty string '' (from whitespace pieces and the gaps between adjacent separators) becomes a token with id 0.
# keywords: empty, whitespace, ''
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed]
    all_tokens = sorted(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
