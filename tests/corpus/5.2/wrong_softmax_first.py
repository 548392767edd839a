# expect: wrong
# mistake: applies torch.softmax to the logits and hands the probabilities to cross_entropy, which applies log-softmax itself (a second softmax).
# keywords: logits, softmax, probabilities
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)
    probas = torch.softmax(logits, dim=-1)
    return torch.nn.functional.cross_entropy(probas.flatten(0, 1), target_batch.flatten())
