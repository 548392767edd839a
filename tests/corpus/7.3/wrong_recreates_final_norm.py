# expect: wrong
# mistake: makes final_norm trainable by replacing it with a new nn.LayerNorm(emb_dim), which throws away its (pretrained) scale and shift.
# keywords: re-create, re-initialise, final_norm
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    model.final_norm = nn.LayerNorm(emb_dim)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    return model
