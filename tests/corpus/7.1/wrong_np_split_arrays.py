# expect: wrong
# mistake: cuts the shuffled frame with np.split(df, [train_end, validation_end]), which with pandas 3 returns NumPy arrays, not DataFrames (the cut points themselves are right).
# keywords: dataframe, df.iloc[a:b]
import numpy as np


def create_balanced_dataset(df):
    num_spam = len(df[df["Label"] == "spam"])
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    train_df, validation_df, test_df = np.split(df, [train_end, validation_end])
    return train_df, validation_df, test_df
