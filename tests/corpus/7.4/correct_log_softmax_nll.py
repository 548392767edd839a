# expect: correct
# mistake: none (the loss by hand: log_softmax of the last token's logits and nll_loss; the accuracy concatenates the predictions and labels of the batches used and takes the mean)
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    log_probs = torch.log_softmax(model(input_batch)[:, -1, :], dim=-1)
    return nn.functional.nll_loss(log_probs, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    if num_batches is None or num_batches > len(data_loader):
        num_batches = len(data_loader)
    predictions, labels = [], []
    with torch.no_grad():
        for i, (input_batch, target_batch) in enumerate(data_loader):
            if i == num_batches:
                break
            logits = model(input_batch.to(device))[:, -1, :]
            predictions.append(logits.argmax(dim=-1))
            labels.append(target_batch.to(device))
    return (torch.cat(predictions) == torch.cat(labels)).float().mean().item()
