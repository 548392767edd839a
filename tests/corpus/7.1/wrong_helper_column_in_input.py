# expect: wrong
# mistake: adds a helper column is_spam to the caller's DataFrame (df["is_spam"] = ...) to select the rows; the result drops it again, but the frame passed in keeps the extra column.
# keywords: assign into df, passed in, changed
# absent: tensor, masked_fill
def create_balanced_dataset(df):
    df["is_spam"] = df["Label"] == "spam"
    spam_df = df[df["is_spam"]]
    ham_subset = df[~df["is_spam"]].sample(len(spam_df), random_state=123)
    return pd.concat([ham_subset, spam_df]).drop(columns="is_spam")


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
