# expect: correct
# mistake: none (set comprehension, dict(zip(tokens, range(len(tokens)))))
def build_vocab(text):
    unique = {token.strip() for token in re.split(TOKEN_PATTERN, text) if token.strip()}
    tokens = sorted(unique) + ["<|endoftext|>", "<|unk|>"]
    return dict(zip(tokens, range(len(tokens))))
