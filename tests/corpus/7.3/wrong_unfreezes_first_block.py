# expect: wrong
# mistake: unfreezes model.trf_blocks[0], the first transformer block, instead of the last one.
# keywords: trf_blocks[-1], last transformer block
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.trf_blocks[0].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
