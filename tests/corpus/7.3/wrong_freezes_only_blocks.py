# expect: wrong
# mistake: freezes only the transformer blocks, so the token and position embeddings stay trainable.
# keywords: should be frozen, every parameter
def add_classification_head(model, num_classes, emb_dim):
    for param in model.trf_blocks.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
