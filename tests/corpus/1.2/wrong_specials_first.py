# expect: wrong
# mistake: puts the special tokens at the start of the vocabulary (ids 0 and 1) instead of appending them after the sorted tokens.
# keywords: special tokens, appended, after
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = ["<|endoftext|>", "<|unk|>"] + sorted(set(preprocessed))
    return {token: integer for integer, token in enumerate(all_tokens)}
