# expect: wrong
# mistake: renumbers the caller's DataFrame with df.reset_index(drop=True, inplace=True) before shuffling: the parts are right, but the frame passed in loses its index.
# keywords: inplace, passed in, changed
# absent: tensor, masked_fill
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df.reset_index(drop=True, inplace=True)
    shuffled = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(shuffled) * train_frac)
    validation_end = train_end + int(len(shuffled) * validation_frac)
    return shuffled[:train_end], shuffled[train_end:validation_end], shuffled[validation_end:]
