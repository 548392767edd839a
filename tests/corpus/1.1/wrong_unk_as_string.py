# expect: wrong
# mistake: replaces an unknown word by the string "<|unk|>" in the list of ids instead of by the id of <|unk|> (the book replaces the token first and then looks it up; this student merged the two steps).
# keywords: <|unk|>, id, look it up
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        ids = [self.str_to_int.get(item, "<|unk|>") for item in preprocessed]
        return ids

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
