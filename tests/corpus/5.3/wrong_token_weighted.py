# expect: wrong
# mistake: weights each batch's loss by its number of tokens and divides by the total number of tokens, so a partial last batch counts less than a full one instead of the plain mean of the batch losses.
# keywords: mean of the batch losses, partial, weight
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    total_loss, total_tokens = 0.0, 0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        total_loss += loss.item() * target_batch.numel()
        total_tokens += target_batch.numel()
    return total_loss / total_tokens
