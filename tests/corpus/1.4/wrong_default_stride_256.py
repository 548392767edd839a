# expect: wrong
# mistake: the signature says stride=256 (same as max_length, "no overlap") instead of stride=128.
# keywords: default, stride
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=256,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
