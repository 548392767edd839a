# expect: wrong
# mistake: takes the softmax over dim=1, thinking of logits as (batch, vocab): fails on a single 1-D row of logits and normalises over the wrong dimension for 3-D logits.
# keywords: dimension, dim=-1
# absent: batched input
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    scaled_logits = logits / temperature
    probas = torch.softmax(scaled_logits, dim=1)
    return probas
