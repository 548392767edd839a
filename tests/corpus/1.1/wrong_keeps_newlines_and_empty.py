# expect: wrong
# mistake: filters out only the single-space pieces (item != " ") instead of every piece that is empty after .strip(), so the empty strings between adjacent separators, line breaks and tabs stay and each becomes <|unk|>.
# keywords: whitespace, empty, strip
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item for item in preprocessed if item != " "]
        unk = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(item, unk) for item in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
