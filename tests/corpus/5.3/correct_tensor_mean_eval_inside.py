# expect: correct
# mistake: none (switches to eval mode and no_grad itself, which the task leaves to the caller but accepts, and returns the mean as a 0-d tensor rather than a float)
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    model.eval()
    with torch.no_grad():
        losses = [calc_loss_batch(x, y, model, device) for _, (x, y) in zip(range(n), data_loader)]
    return torch.stack(losses).mean()
