# expect: correct
# mistake: none (shuffles the ham rows with .sample(frac=1, random_state=123) and keeps the first num_spam: pandas draws n rows as the first n of a seeded permutation, so this is the same draw as .sample(num_spam, random_state=123); spam rows first)
def create_balanced_dataset(df):
    spam_df = df[df["Label"] == "spam"]
    ham_df = df[df["Label"] == "ham"].sample(frac=1, random_state=123)
    return pd.concat([spam_df, ham_df.iloc[:len(spam_df)]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df.iloc[:train_end], df.iloc[train_end:validation_end], df.iloc[validation_end:]
