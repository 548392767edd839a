# expect: correct
# mistake: none (copies the vocabulary, keeps the <|unk|> id as an attribute, filter() + map() instead of a list comprehension, dict(zip(...)) for the inverse)
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = dict(vocab)
        self.int_to_str = dict(zip(vocab.values(), vocab.keys()))
        self.unk_id = self.str_to_int["<|unk|>"]

    def encode(self, text):
        tokens = filter(None, map(str.strip, re.split(TOKEN_PATTERN, text)))
        return [self.str_to_int[t] if t in self.str_to_int else self.unk_id for t in tokens]

    def decode(self, ids):
        joined = " ".join(self.int_to_str[i] for i in ids)
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', joined)
