# expect: wrong
# mistake: has no special case for an empty data loader, so it divides 0.0 by 0 (ZeroDivisionError) instead of returning float("nan").
# keywords: empty, nan
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    total_loss = 0.0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        total_loss += loss.item()
    return total_loss / num_batches
