# expect: wrong
# mistake: splits the text with text.split() instead of re.split(TOKEN_PATTERN, ...), so punctuation stays glued to the words ("dawn," is one token, hence <|unk|>).
# keywords: punctuation, split, TOKEN_PATTERN
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        tokens = text.split()
        unk = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(token, unk) for token in tokens]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
