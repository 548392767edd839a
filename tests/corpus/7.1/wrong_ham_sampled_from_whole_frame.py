# expect: wrong
# mistake: draws the num_spam "ham" rows with df.sample(num_spam, random_state=123) on the whole frame, so some spam rows come in twice and some ham rows are missing.
# keywords: ham rows only, from the ham
def create_balanced_dataset(df):
    spam_df = df[df["Label"] == "spam"]
    num_spam = len(spam_df)
    ham_subset = df.sample(num_spam, random_state=123)
    return pd.concat([ham_subset, spam_df])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
