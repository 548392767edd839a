# expect: wrong
# mistake: decode's re.sub has the group on the wrong side, r'([,.:;?!"()\'])\s+', so it removes the space AFTER punctuation ("dawn,two") and keeps the one before ("dawn ,two").
# keywords: space before punctuation, before
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
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'([,.:;?!"()\'])\s+', r'\1', text)
