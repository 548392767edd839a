# expect: correct
# mistake: none (works on df.copy(), so changing the copy in place is harmless: renumbers its index by assignment; query() selects the rows; sizes as python ints before slicing)
def create_balanced_dataset(df):
    df = df.copy()
    df.index = range(len(df))
    spam_df = df.query("Label == 'spam'")
    ham_subset = df.query("Label == 'ham'").sample(n=spam_df.shape[0], random_state=123)
    return pd.concat([ham_subset, spam_df])


def random_split(df, train_frac, validation_frac):
    df = df.copy()
    df = df.sample(frac=1, random_state=123)
    df.index = range(len(df))
    sizes = [int(len(df) * train_frac), int(len(df) * validation_frac)]
    train_df = df[:sizes[0]]
    validation_df = df[sizes[0]:sum(sizes)]
    test_df = df[sum(sizes):]
    return train_df, validation_df, test_df
