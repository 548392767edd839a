# expect: correct
# mistake: none (decode written as a loop that adds a space before every token except the first and the punctuation marks , . : ; ? ! " ( ) ')
class SimpleTokenizerV2:
    PUNCTUATION = set(',.:;?!"()\'')

    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {}
        for token, token_id in vocab.items():
            self.int_to_str[token_id] = token

    def encode(self, text):
        ids = []
        for piece in re.split(TOKEN_PATTERN, text):
            token = piece.strip()
            if token == "":
                continue
            ids.append(self.str_to_int.get(token, self.str_to_int["<|unk|>"]))
        return ids

    def decode(self, ids):
        text = ""
        for i in ids:
            token = self.int_to_str[i]
            if text and token not in self.PUNCTUATION:
                text += " "
            text += token
        return text
