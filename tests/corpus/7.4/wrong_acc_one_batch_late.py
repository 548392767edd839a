# expect: wrong
# mistake: stops with `if i > num_batches: break`, so it counts the messages of num_batches + 1 batches when the loader has them.
# keywords: one batch late, i >= num_batches
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    """The mean cross-entropy of the last token's logits against the class labels."""
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)[:, -1, :]  # the last token is the only one that has seen the whole message
    return nn.functional.cross_entropy(logits, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    """The fraction of messages classified right (from the last token) in the first num_batches batches."""
    model.eval()  # no dropout while predicting
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    correct, seen = 0, 0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i > num_batches:
            break
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        with torch.no_grad():
            logits = model(input_batch)[:, -1, :]
        predicted = torch.argmax(logits, dim=-1)
        correct += (predicted == target_batch).sum().item()
        seen += predicted.shape[0]
    return correct / seen
