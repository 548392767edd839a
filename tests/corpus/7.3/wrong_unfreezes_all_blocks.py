# expect: wrong
# mistake: unfreezes every transformer block (model.trf_blocks.parameters()) instead of only the last one.
# keywords: should be frozen, trf_blocks[-1]
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.trf_blocks.parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
