# expect: correct
# mistake: none (the book's steps with the spam rows first: the order of the balanced rows is free, so its split holds other messages than the reference's, and its longest training message, 132 tokens, is longer than the offline small model's context of 128; chapters 07 and 08 must still run, see tests/test_spam_first.py)
def create_balanced_dataset(df):
    spam_subset = df[df["Label"] == "spam"]
    ham_subset = df[df["Label"] == "ham"].sample(len(spam_subset), random_state=123)
    return pd.concat([spam_subset, ham_subset])


def random_split(df, train_frac, validation_frac):
    shuffled = df.sample(frac=1, random_state=123).reset_index(drop=True)
    n_train = int(len(shuffled) * train_frac)
    n_validation = int(len(shuffled) * validation_frac)
    return (shuffled[:n_train], shuffled[n_train:n_train + n_validation],
            shuffled[n_train + n_validation:])
