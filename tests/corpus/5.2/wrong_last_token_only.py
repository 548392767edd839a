# expect: wrong
# mistake: as in generation, keeps only the last position's logits (logits[:, -1, :]) and target, so the loss covers one token per sequence instead of all of them.
# keywords: every token, all tokens, each position, every position, all positions
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch[:, -1])
