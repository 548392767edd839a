# expect: wrong
# mistake: returns the id -> token mapping ({integer: token}) instead of token -> id, mixing up the vocabulary with the tokenizer's int_to_str.
# keywords: token -> id, keys, token
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {integer: token for integer, token in enumerate(all_tokens)}
