# expect: correct
# mistake: none (torch.where with a 0-d CPU tensor for -inf: PyTorch allows 0-d CPU tensors with CUDA ones)
def top_k_logits(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[..., -1, None]
    return torch.where(logits < kth, torch.tensor(float("-inf")), logits)
