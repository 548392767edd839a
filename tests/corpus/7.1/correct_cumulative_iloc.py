# expect: correct
# mistake: none (the cumulative reading: cuts at int(n * train_frac) and int(n * (train_frac + validation_frac)), accepted by the contract; balancing with value_counts and a boolean mask)
def create_balanced_dataset(df):
    num_spam = df["Label"].value_counts()["spam"]
    is_ham = df["Label"] == "ham"
    ham_subset = df[is_ham].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[~is_ham]])


def random_split(df, train_frac, validation_frac):
    shuffled = df.sample(frac=1, random_state=123).reset_index(drop=True)
    n = len(shuffled)
    train_end = int(n * train_frac)
    validation_end = int(n * (train_frac + validation_frac))
    return shuffled.iloc[:train_end], shuffled.iloc[train_end:validation_end], shuffled.iloc[validation_end:]
