# expect: wrong
# mistake: writes model.requires_grad = False, which only sets an attribute on the module and freezes no parameter.
# keywords: requires_grad_(false), every parameter, nothing is frozen
def add_classification_head(model, num_classes, emb_dim):
    model.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    model.trf_blocks[-1].requires_grad = True
    model.final_norm.requires_grad = True
    return model
