# expect: correct
# mistake: none (itertools.islice takes the first num_batches batches; the losses are stacked and averaged with torch, nan when there are none)
def calc_loss_loader(data_loader, model, device, num_batches=None):
    from itertools import islice

    losses = [calc_loss_batch(x, y, model, device).detach()
              for x, y in islice(data_loader, num_batches)]
    if not losses:
        return float("nan")
    return torch.stack(losses).mean().item()
