# expect: correct
# mistake: none (samples among torch.topk's candidates and maps the choice back with gather; top-p on the candidates' logits)
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    done = torch.zeros(idx.size(0), dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        if temperature == 0.0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            if top_k is not None:
                cand_logits = top_k_logits(logits, top_k)
            else:
                cand_logits = logits
            if top_p is not None:
                cand_logits = top_p_logits(cand_logits, top_p)
            probs = softmax_with_temperature(cand_logits, temperature)
            nxt = torch.multinomial(probs, 1)
        idx = torch.cat((idx, nxt), dim=1)
        if eos_id is not None:
            done = done | (nxt[:, 0] == eos_id)
            if bool(done.all()):
                break
    return idx
