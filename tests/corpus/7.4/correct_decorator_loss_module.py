# expect: correct
# mistake: none (nn.CrossEntropyLoss as a module; the accuracy function decorated with @torch.no_grad(), stopping with zip(range(n), loader))
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    last_logits = model(input_batch)[:, -1, :]
    return nn.CrossEntropyLoss()(last_logits, target_batch)


@torch.no_grad()
def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    right, seen = 0, 0
    for _, (x, y) in zip(range(n), data_loader):
        x, y = x.to(device), y.to(device)
        pred = model(x)[:, -1, :].argmax(dim=1)
        right += (pred == y).sum().item()
        seen += len(y)
    return right / seen
