# expect: wrong
# mistake: maps the labels to numbers ({"ham": 0, "spam": 1}, the book's next step) inside create_balanced_dataset, so the balanced frame no longer has the labels ham and spam it was given.
# keywords: labels, as given
# absent: spam rows are missing
def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    balanced_df = pd.concat([ham_subset, df[df["Label"] == "spam"]])
    balanced_df["Label"] = balanced_df["Label"].map({"ham": 0, "spam": 1})
    return balanced_df


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]
