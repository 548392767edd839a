# expect: wrong
# mistake: numbers the tokens from 1 (enumerate(all_tokens, start=1)), as if id 0 were reserved for padding, so every id is one too large.
# keywords: start at 0, from 0, enumerate
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(list(set(preprocessed)))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens, start=1)}
