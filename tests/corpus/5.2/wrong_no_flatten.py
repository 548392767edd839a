# expect: wrong
# mistake: hands the (batch, num_tokens, vocab_size) logits and (batch, num_tokens) targets to cross_entropy unflattened, which reads dim 1 (the tokens) as the classes.
# keywords: flatten, vocab, classes
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits, target_batch)
