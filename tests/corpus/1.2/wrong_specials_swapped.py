# expect: wrong
# mistake: appends the special tokens in the wrong order, "<|unk|>" before "<|endoftext|>".
# keywords: order, <|endoftext|>
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(list(set(preprocessed)))
    all_tokens.extend(["<|unk|>", "<|endoftext|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
