# expect: wrong
# mistake: unfreezes the last transformer block but forgets final_norm.
# keywords: final_norm
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    return model
