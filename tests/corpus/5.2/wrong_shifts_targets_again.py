# expect: wrong
# mistake: shifts once more (logits[:, :-1] against target_batch[:, 1:]), although the data loader's targets are already the inputs shifted by one.
# keywords: shift, already, target
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)
    logits = logits[:, :-1, :]
    targets = target_batch[:, 1:]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
