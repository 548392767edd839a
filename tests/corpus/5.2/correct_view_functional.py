# expect: correct
# mistake: none (F.cross_entropy with logits.view(-1, vocab_size) and target_batch.view(-1))
import torch.nn.functional as F


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    vocab_size = logits.size(-1)
    return F.cross_entropy(logits.view(-1, vocab_size), target_batch.view(-1))
