# expect: wrong
# mistake: rebuilds the mappings with enumerate(vocab) (ids = position of the key in the dict) instead of using the ids the vocabulary gives; only right when the ids happen to be 0..n-1 in insertion order.
# keywords: enumerate
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = {token: i for i, token in enumerate(vocab)}
        self.int_to_str = {i: token for i, token in enumerate(vocab)}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        unk = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(item, unk) for item in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
