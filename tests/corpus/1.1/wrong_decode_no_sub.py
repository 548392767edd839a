# expect: wrong
# mistake: decode only joins the tokens with spaces and forgets the re.sub that removes the space before punctuation ("Hello , world .").
# keywords: space before punctuation, re.sub
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        preprocessed = [item if item in self.str_to_int else "<|unk|>" for item in preprocessed]
        return [self.str_to_int[s] for s in preprocessed]

    def decode(self, ids):
        return " ".join([self.int_to_str[i] for i in ids])
