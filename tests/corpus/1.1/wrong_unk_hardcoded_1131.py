# expect: wrong
# mistake: hard-codes the id of <|unk|> as 1131 (its id in the-verdict's vocabulary) instead of looking it up in the vocabulary it was given.
# keywords: <|unk|>, look it up
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(TOKEN_PATTERN, text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        return [self.str_to_int.get(item, 1131) for item in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
