# expect: wrong
# mistake: cuts the test part to int(len(df) * (1 - train_frac - validation_frac)) rows after the validation part, so the rows lost to rounding down are dropped instead of going to the test set.
# keywords: every row after, lost, test part takes
def create_balanced_dataset(df):
    num_spam = (df["Label"] == "spam").sum()
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    test_frac = 1 - train_frac - validation_frac
    n_train = int(len(df) * train_frac)
    n_validation = int(len(df) * validation_frac)
    n_test = int(len(df) * test_frac)
    train_df = df[:n_train]
    validation_df = df[n_train:n_train + n_validation]
    test_df = df[n_train + n_validation:n_train + n_validation + n_test]
    return train_df, validation_df, test_df
