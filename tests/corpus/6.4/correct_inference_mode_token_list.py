# expect: correct
# mistake: none (decorated with torch.inference_mode(); keeps the new tokens in a list and concatenates once at the end; eos tracked with a Python set of finished rows)
import torch.nn.functional as F


@torch.inference_mode()
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    new_tokens = []
    seq = idx
    done_rows = set()
    for _ in range(max_new_tokens):
        logits = model(seq[:, -context_size:])[:, -1, :]
        if temperature > 0:
            if top_k is not None:
                logits = top_k_logits(logits, top_k)
            if top_p is not None:
                logits = top_p_logits(logits, top_p)
            probs = F.softmax(logits / temperature, dim=-1)
            tok = torch.multinomial(probs, num_samples=1)
        else:
            tok = torch.argmax(logits, dim=-1, keepdim=True)
        new_tokens.append(tok)
        seq = torch.cat((seq, tok), dim=1)
        if eos_id is not None:
            done_rows.update(torch.nonzero(tok[:, 0] == eos_id).flatten().tolist())
            if len(done_rows) == idx.shape[0]:
                break
    return torch.cat([idx] + new_tokens, dim=1)
