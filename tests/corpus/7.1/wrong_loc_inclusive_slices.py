# expect: wrong
# mistake: cuts with .loc, whose slices include their end label, so the row at train_end is both the last training row and the first validation row (and likewise at validation_end).
# keywords: overlap, exactly once, .loc
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    train_df = df.loc[:train_end]
    validation_df = df.loc[train_end:validation_end]
    test_df = df.loc[validation_end:]
    return train_df, validation_df, test_df
