# expect: wrong
# mistake: starts the validation part one row after the end of the training part (df[train_end + 1:validation_end]), so one row is in no part at all.
# keywords: exactly one part, df[train_end:validation_end]
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    train_df = df[:train_end]
    validation_df = df[train_end + 1:validation_end]
    test_df = df[validation_end:]
    return train_df, validation_df, test_df
