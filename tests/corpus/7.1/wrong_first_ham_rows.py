# expect: wrong
# mistake: keeps the first num_spam ham rows with .head(num_spam) instead of a seeded random sample.
# keywords: .sample(num_spam, random_state=123), random sample
def create_balanced_dataset(df):
    spam_df = df[df["Label"] == "spam"]
    ham_df = df[df["Label"] == "ham"].head(len(spam_df))
    return pd.concat([ham_df, spam_df])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
