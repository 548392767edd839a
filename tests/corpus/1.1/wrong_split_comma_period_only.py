# expect: wrong
# mistake: encode uses the book's very first experiment pattern r'([,.]|\s)' instead of TOKEN_PATTERN, so ':', ';', '?', '!', quotes, brackets, '_' and '--' are not split off.
# keywords: punctuation, TOKEN_PATTERN, split
class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        preprocessed = re.split(r'([,.]|\s)', text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        preprocessed = [item if item in self.str_to_int else "<|unk|>" for item in preprocessed]
        return [self.str_to_int[s] for s in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
