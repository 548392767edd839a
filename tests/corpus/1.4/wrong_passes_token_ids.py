# expect: wrong
# mistake: encodes the text itself and hands the token ids to GPTDatasetV1, which encodes again: GPTDatasetV1 takes the raw text txt.
# keywords: txt, text, encode
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    token_ids = tokenizer.encode(txt)
    dataset = GPTDatasetV1(token_ids, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
