# expect: correct
# mistake: none (groupby's get_group for the ham rows, which keeps their order; the split cuts by position with iloc and keeps the shuffled index instead of resetting it)
def create_balanced_dataset(df):
    groups = df.groupby("Label")
    spam_df = groups.get_group("spam")
    ham_subset = groups.get_group("ham").sample(len(spam_df), random_state=123)
    return pd.concat([ham_subset, spam_df], ignore_index=True)


def random_split(df, train_frac, validation_frac):
    shuffled = df.sample(frac=1, random_state=123)
    n = len(shuffled)
    n_train = int(n * train_frac)
    n_validation = int(n * validation_frac)
    train_df = shuffled.iloc[:n_train]
    validation_df = shuffled.iloc[n_train:n_train + n_validation]
    test_df = shuffled.iloc[n_train + n_validation:]
    return train_df, validation_df, test_df
