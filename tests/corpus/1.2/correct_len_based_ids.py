# expect: correct
# mistake: none (sorted(set(...)) and ids from len(vocab) while filling the dict, special tokens added last the same way)
def build_vocab(text):
    words = set()
    for piece in re.split(TOKEN_PATTERN, text):
        piece = piece.strip()
        if piece:
            words.add(piece)
    vocab = {}
    for word in sorted(words):
        vocab[word] = len(vocab)
    for special in ("<|endoftext|>", "<|unk|>"):
        vocab[special] = len(vocab)
    return vocab
