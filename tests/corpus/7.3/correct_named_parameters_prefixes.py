# expect: correct
# mistake: none (replaces the head first, then sets requires_grad from each parameter's name: out_head, the last block's number from len(model.trf_blocks), final_norm)
def add_classification_head(model, num_classes, emb_dim):
    model.out_head = nn.Linear(emb_dim, num_classes)
    last_block = f"trf_blocks.{len(model.trf_blocks) - 1}."
    trainable = ("out_head.", last_block, "final_norm.")
    for name, param in model.named_parameters():
        param.requires_grad = name.startswith(trainable)
    return model
