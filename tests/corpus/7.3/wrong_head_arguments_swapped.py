# expect: wrong
# mistake: creates the head as nn.Linear(num_classes, emb_dim), with in_features and out_features swapped.
# keywords: nn.linear(emb_dim, num_classes), in_features
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(num_classes, emb_dim)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
