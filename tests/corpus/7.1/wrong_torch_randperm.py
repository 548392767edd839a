# expect: wrong
# mistake: shuffles with torch.randperm after torch.manual_seed(123): the same seed, but another generator, so another order than df.sample(frac=1, random_state=123).
# keywords: torch.randperm, df.sample(frac=1, random_state=123)
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    torch.manual_seed(123)
    order = torch.randperm(len(df)).tolist()
    df = df.iloc[order].reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
