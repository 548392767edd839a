# expect: wrong
# mistake: computes the part sizes with round() instead of int(), so with 37 rows and train_frac=0.7 the training part gets round(25.9) = 26 rows instead of int(25.9) = 25.
# keywords: int(, rounds down
def create_balanced_dataset(df):
    num_spam = df[df["Label"] == "spam"].shape[0]
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = round(len(df) * train_frac)
    validation_end = train_end + round(len(df) * validation_frac)
    train_df = df[:train_end]
    validation_df = df[train_end:validation_end]
    test_df = df[validation_end:]
    return train_df, validation_df, test_df
