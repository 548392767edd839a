# expect: wrong
# mistake: lower-cases the text before splitting it (to make the vocabulary smaller), but the vocabulary must be case-sensitive.
# keywords: lower, case
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text.lower())
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
