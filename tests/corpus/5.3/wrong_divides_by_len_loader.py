# expect: wrong
# mistake: sums the losses of the first num_batches batches but always divides by len(data_loader), so the mean is too small when num_batches is smaller than the loader.
# keywords: len(data_loader), number of batches used, divide
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:
        num_batches = len(data_loader)
    total_loss = 0.0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss += loss.item()
        else:
            break
    return total_loss / len(data_loader)
