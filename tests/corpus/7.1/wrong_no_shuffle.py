# expect: wrong
# mistake: cuts the frame in its given order without shuffling it first (only resets the index).
# keywords: df.sample(frac=1, random_state=123), shuffle
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
