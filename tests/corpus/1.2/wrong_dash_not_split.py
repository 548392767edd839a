# expect: wrong
# mistake: writes the split pattern from memory as r'([,.:;?_!"()\']|\s)', without the '--' alternative, so words joined by a double dash stay one token.
# keywords: --
def build_vocab(text):
    preprocessed = re.split(r'([,.:;?_!"()\']|\s)', text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    return {token: integer for integer, token in enumerate(all_tokens)}
