# expect: wrong
# mistake: sorts the token list but does not remove the duplicates, so with a dict comprehension each repeated token keeps its last position and the ids have gaps.
# keywords: set, repeated, duplicate
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(preprocessed)
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
