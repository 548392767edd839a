# expect: correct
# mistake: none (by hand: log_softmax over the vocabulary, gather the targets' log-probabilities, negate the mean)
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)
    log_probs = torch.log_softmax(logits, dim=-1)
    target_log_probs = log_probs.gather(-1, target_batch.unsqueeze(-1)).squeeze(-1)
    return -target_log_probs.mean()
