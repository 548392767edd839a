# expect: wrong
# mistake: tokenizes with re.findall(r"\w+|[^\w\s]", text), a pattern from elsewhere: '_' counts as a word character (letters_in_the_margin stays one token) and '--' becomes two '-' tokens.
# keywords: --, _, TOKEN_PATTERN, split
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        tokens = re.findall(r"\w+|[^\w\s]", text)
        unk = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(token, unk) for token in tokens]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
