# expect: wrong
# mistake: replaces out_head first and freezes every parameter afterwards, so the new head is frozen too and never learns.
# keywords: head is frozen, freeze everything first
def add_classification_head(model, num_classes, emb_dim):
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.parameters():
        param.requires_grad = False
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
