# expect: wrong
# mistake: builds the vocabulary of section 2.3 (sorted unique tokens) and forgets to append the two special tokens of section 2.4.
# keywords: special tokens, <|endoftext|>, <|unk|>
def build_vocab(text):
    preprocessed = re.split(TOKEN_PATTERN, text)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_words = sorted(set(preprocessed))
    vocab = {token: integer for integer, token in enumerate(all_words)}
    return vocab
