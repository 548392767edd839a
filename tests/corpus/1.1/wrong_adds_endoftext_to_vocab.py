# expect: wrong
# mistake: adds "<|endoftext|>" to the vocabulary it was given when it is missing: the caller's dict changes, and that token gets a new id instead of "<|unk|>"'s.
# keywords: changed the vocab
class SimpleTokenizerV2:
    def __init__(self, vocab):
        if "<|endoftext|>" not in vocab:
            vocab["<|endoftext|>"] = len(vocab)
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        unk = self.str_to_int["<|unk|>"]
        return [self.str_to_int.get(item, unk) for item in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r"\1", text)
