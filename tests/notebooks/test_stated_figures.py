"""Every figure a chapter's text quotes is accounted for: the run prints it, or it is a setting of
the notebook's own code, a recorded measurement, arithmetic, the book's number, or an example.

A figure is any number in a master's prose, outside code spans, maths and links: a decimal
number, a percentage, a whole number (1,024 or 45), a split in percent (70/10/20); and in its
maths a decimal number, a power of ten (2 \\cdot 10^{-7}, written 2e-7 here) or a whole number
with thousands separators (2{,}362{,}368, written 2,362,368 here). Names are not figures:
task numbers (4.2), the course's chapters (05), the book's chapters and sections, the years of
publications, model names (124M), list and heading numbers (names_a_thing). Most figures are
settings the cells themselves write (a learning rate of 0.0004, a temperature of 0.1, 6 epochs):
found in the notebook's code, they need nothing more. Every other one has an entry in ACCOUNTED,
which says how it holds:

- ("printed", [TEXT, ...], VALUE): the master's run prints each TEXT (test_masters_run checks
  every run's output for it), and VALUE, arithmetic on the numbers printed there (by default the
  last one), rounds to the figure;
- ("computed", EXPRESSION): the expression's value rounds to the figure (arithmetic on the
  model's sizes, a property of a formula);
- ("below", EXPRESSION) or ("above", EXPRESSION): a bound the text claims ("less than 0.0005
  anywhere", "over 3,000 times"), and the value is on its side;
- ("about", EXPRESSION): a round figure ("about 5,000 tokens") within 5 % of the value;
- ("recorded", EXPRESSION): arithmetic on figures recorded in docs/benchmarks.md (each number of
  the expression is found there), rounding to the figure: GPU figures a CPU run cannot print;
- ("book", None): the book's own number, and the paragraph says so;
- ("specification", WORDS) or ("practice", WORDS): a published fact about hardware (a compute
  capability) or a common practice, not a measurement of the course's;
- ("not a figure", WORDS): a number inside an example text, a section number, an address.

A new figure in a chapter's text fails test_every_figure_is_accounted_for until it gets an
entry; an entry whose figure has left the text fails too.
"""
import json
import math
import re

import pytest
import torch

from factory import REPO

MASTERS = sorted((REPO / "solutions").glob("*.ipynb"))
# A decimal number, a percentage, or a whole number written with thousands separators (1,024).
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?:\s?%)?|\b\d+\s?%|\b\d{1,3}(?:,\d{3})+\b")
TASK_NUMBER = re.compile(r"\d\.\d$")  # a task's name ("Task 4.2"), when it is one


def gelu_exact(x):
    return x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gpu_run_peak_lr():
    """The GPU run's peak rate, as gptcourse.pretrain.gpu_run writes it (deciding the run's other
    settings needs a GPU)."""
    import inspect

    from gptcourse import pretrain

    return float(re.search(r"peak_lr=([\d.e-]+)", inspect.getsource(pretrain.gpu_run)).group(1))


def phi(x):
    """The standard normal distribution function, GELU's gate."""
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def gelu_minimum():
    """(where, value) of GELU's minimum, on a fine grid."""
    x = torch.linspace(-3, 0, 300001, dtype=torch.float64)
    y = gelu_exact(x)
    return x[y.argmin()].item(), y.min().item()


def gelu_slope(x):
    x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    gelu_exact(x).backward()
    return x.grad.item()


def cpu_run_setting(name):
    from gptcourse import pretrain

    return getattr(pretrain.cpu_run(), name)


def challenge_setting(name):
    from gptcourse import challenge

    return getattr(challenge, name)


def challenge_tokens():
    """How many GPT-2 tokens the challenge's text has (the data mirror's tinyshakespeare)."""
    from gptcourse import challenge

    return len(challenge.token_ids())


def gpt2_vocabulary():
    from gptcourse import get_encoding

    return get_encoding().n_vocab


NAMES = {"math": math, "torch": torch, "gelu_exact": gelu_exact, "gelu_tanh": gelu_tanh, "phi": phi,
         "gelu_minimum": gelu_minimum, "gelu_slope": gelu_slope, "cpu_run_setting": cpu_run_setting,
         "gpu_run_peak_lr": gpu_run_peak_lr, "challenge_setting": challenge_setting,
         "challenge_tokens": challenge_tokens, "gpt2_vocabulary": gpt2_vocabulary}

# (chapter, figure) -> how it holds. The figure as the text writes it.
ACCOUNTED = {
    ("01_text_data", "3.14159"): ("not a figure", 'a number (*"3.14159"*)'),
    ("01_text_data", "3.5"): ("not a figure", 'a number with a decimal point (*"3.5"*)'),
    ("03_multihead_attention", "3.6"): ("not a figure", "section 3.6 of *Build a Large Language Model"),
    ("04_gpt_model", "0.0188"): ("printed", ["'0.0188'"], None),
    ("04_gpt_model", "0.0005"): ("below", "(gelu_exact(torch.linspace(-10, 10, 200001, dtype=torch.float64)) - "
                                          "gelu_tanh(torch.linspace(-10, 10, 200001, dtype=torch.float64))).abs().max()"),
    ("04_gpt_model", "38.6"): ("computed", "50257 * 768 / 1e6"),
    ("04_gpt_model", "0.0002"): ("printed", ["largest probability: 2.05e-04"], "2.05e-04"),
    ("04_gpt_model", "1.64"): ("printed", ["GPT-2 XL         1,637,792,000"], "1637792000 / 1e9"),
    ("05_pretraining", "10.79"): ("printed", ["their mean:        tensor(-10.7940)"], "10.7940"),
    ("05_pretraining", "3.56"): ("book", None),
    ("05_pretraining", "0.4"): ("book", None),
    ("05_pretraining", "0.004"): ("printed", ["AdamW peak lr 0.004"], None),
    ("05_pretraining", "0.0006"): ("computed", "gpu_run_peak_lr()"),
    ("05_pretraining", "13.7"): ("printed", ["parameters: 13,673,984"], "13673984 / 1e6"),
    ("05_pretraining", "94 %"): ("computed", "small_model_share_of_embedding_and_head() * 100"),
    # The H100 ladder (docs/benchmarks.md, "H100, the whole ladder"; the notebook prints it too).
    ("05_pretraining", "1.8"): ("recorded", "1.84"),
    ("05_pretraining", "1.9"): ("recorded", "1.95"),
    ("05_pretraining", "1.6"): ("recorded", "1.64"),
    ("05_pretraining", "1.18"): ("recorded", "140161 / 118834"),
    ("05_pretraining", "42 %"): ("recorded", "42.1"),
    ("05_pretraining", "0.004 %"): ("recorded", "4.2e-05 * 100"),
    ("05_pretraining", "10.0"): ("not a figure", "the first at 10.0.0.1"),
    ("05_pretraining", "8.0"): ("specification", "compute capability"),
    ("05_pretraining", "8.6"): ("specification", "| L4, A10G | 8.9, 8.6 |"),
    ("05_pretraining", "8.9"): ("specification", "| L4, A10G | 8.9, 8.6 |"),
    ("05_pretraining", "9.0"): ("specification", "| A100, H100, H200 | 8.0, 9.0, 9.0 |"),
    ("06_sampling", "0.043"): ("printed", ["pizza 0.0430"], None),
    ("06_sampling", "99 %"): ("printed", ["T = 0.1: forward 0.991"], "0.991 * 100"),
    ("06_sampling", "0.572"): ("printed", ["forward  logit  6.75  probability 0.5721"], None),
    ("06_sampling", "0.358"): ("printed", ["toward  logit  6.28  probability 0.3576"], None),
    ("06_sampling", "0.061"): ("printed", ["closer  logit  4.51  probability 0.0609"], None),
    ("06_sampling", "0.930"): ("computed", "0.5721 + 0.3576"),  # the two printed above
    ("06_sampling", "0.2"): ("not a figure", "0.1 + 0.2 is not exactly 0.3"),
    ("06_sampling", "0.3"): ("not a figure", "0.1 + 0.2 is not exactly 0.3"),
    ("06_sampling", "0.6"): ("practice", "In practice temperatures between about 0.6 and 1.2 are common"),
    ("06_sampling", "10.1"): ("recorded", "10.1"),
    ("06_sampling", "9.6"): ("recorded", "9.6"),
    ("07_classification", "13 %"): ("printed", ["5,574 messages", "spam     747"], "747 / 5574 * 100"),
    ("07_classification", "87 %"): ("printed", ["5,574 messages", "spam     747"], "100 - 747 / 5574 * 100"),
    ("07_classification", "20 %"): ("computed", "100 - 70 - 10"),  # the rest, after 70 % and 10 %
    ("07_classification", "50 %"): ("not a figure", "Is it near 50 % in all three"),
    ("07_classification", "0.5"): ("not a figure", "near 0.5 means the model was unsure"),
    ("09_instruction", "10 %"): ("book", None),
    ("09_instruction", "15 %"): ("computed", "100 - 85"),  # all but the training set's 85 %
    ("08_lora", "96.6 %"): ("book", None),
    ("08_lora", "97.3 %"): ("book", None),
    ("08_lora", "0.3"): ("computed", "100 / 300"),  # one test message, in points
    ("08_lora", "0.7"): ("computed", "100 / 149"),  # one validation message
    # Whole numbers with thousands separators.
    ("01_text_data", "1,024"): ("specification", "1,024 for GPT-2"),
    ("01_text_data", "1,130"): ("printed", ["('<|endoftext|>', 1130)"], None),
    ("01_text_data", "1,132"): ("printed", ["vocabulary size: 1132"], None),
    ("01_text_data", "1,286"): ("printed", ["number of windows: 1286"], None),
    ("01_text_data", "2,571"): ("printed", ["stride 2:  2571 windows"], "2571"),
    ("01_text_data", "5,141"): ("printed", ["stride 1:  5141 windows"], "5141"),
    ("01_text_data", "4,690"): ("printed", ["number of tokens: 4690"], None),
    ("01_text_data", "5,145"): ("printed", ["GPT-2 tokens in The Verdict: 5145"], None),
    ("01_text_data", "50,000"): ("computed", "gpt2_vocabulary() - 256 - 1"),  # all but the bytes and <|endoftext|>
    ("01_text_data", "50,257"): ("printed", ["vocabulary size: 50257"], None),
    ("01_text_data", "786,432"): ("computed", "1024 * 768"),
    ("04_gpt_model", "0.02"): ("printed", ["with shortcuts: 1.8e-02"], "1.8e-02"),
    ("04_gpt_model", "0.06"): ("printed", ["3.7e-02  6.2e-02"], "6.2e-02"),
    ("04_gpt_model", "3,000"): ("above", "6.4e-04 / 1.9e-07"),  # printed: "without shortcuts: 1.9e-07 ... 6.4e-04"
    ("04_gpt_model", "1,536"): ("printed", ["final LayerNorm                       1,536"], None),
    ("04_gpt_model", "2,360,064"): ("printed", ["parameters: attention 2,360,064"], None),
    ("04_gpt_model", "20,488,000"): ("computed", "2 * 1600 * 4 * 1600 + 4 * 1600 + 1600"),  # GPT-2 XL's feed-forward
    ("04_gpt_model", "3,072"): ("printed", ["LayerNorms 3,072"], None),
    ("04_gpt_model", "38,597,376"): ("printed", ["token embedding                  38,597,376"], None),
    ("04_gpt_model", "50,257"): ("printed", ["logits shape: (2, 4, 50257)"], "50257"),
    ("04_gpt_model", "786,432"): ("printed", ["position embedding                  786,432"], None),
    ("05_pretraining", "1,024"): ("specification", "instead of 1,024"),
    ("05_pretraining", "20,000"): ("computed", "challenge_setting('MAX_ENTRY_CHARS')"),
    ("05_pretraining", "27,648"): ("computed", "6 * 4608"),
    ("05_pretraining", "3,000"): ("about", "13673984 / 4608"),
    ("05_pretraining", "300,000"): ("about", "challenge_tokens() * 0.9"),  # the GPU run's training text
    ("05_pretraining", "338,025"): ("computed", "challenge_tokens()"),
    ("05_pretraining", "4,000,000"): ("computed", "challenge_setting('MAX_PARAMETERS')"),
    ("05_pretraining", "4,600"): ("about", "4608"),
    ("05_pretraining", "4,608"): ("printed", ["4,608 input tokens"], None),
    ("05_pretraining", "48,700"): ("about", "math.exp(10.7940)"),  # the printed loss's exponential
    ("05_pretraining", "5,000"): ("about", "5145"),  # The Verdict in GPT-2 tokens (chapter 01 prints it)
    ("05_pretraining", "50,257"): ("printed", ["loss ln(50,257) = 10.8249"], "50257"),
    ("05_pretraining", "50,304"): ("printed", ["padded vocabulary: 50,304 logits"], None),
    ("05_pretraining", "65,536"): ("computed", "challenge_setting('BUDGET_TOKENS')"),
    ("06_sampling", "1,024"): ("printed", ["GPT-2 small (124M)      1024 tokens"], "1024"),
    ("06_sampling", "50,257"): ("computed", "gpt2_vocabulary()"),
    ("07_classification", "1,045"): ("printed", ["training 1045"], None),
    ("07_classification", "1,494"): ("computed", "747 + 747"),
    ("07_classification", "4,080"): ("computed", "4827 - 747"),
    ("07_classification", "4,827"): ("printed", ["ham     4827"], None),
    ("07_classification", "5,572"): ("printed", ["default quoting: 5,572 messages"], None),
    ("07_classification", "5,574"): ("printed", ["5,574 messages"], None),
    ("07_classification", "50,257"): ("computed", "gpt2_vocabulary()"),
    ("08_lora", "2,666,528"): ("recorded", "2666528"),
    ("08_lora", "24,576"): ("computed", "16 * (768 + 768)"),
    ("08_lora", "589,824"): ("computed", "768 * 768"),
    ("09_instruction", "1,024"): ("specification", "GPT-2's context of 1,024 tokens"),
    ("09_instruction", "1,100"): ("printed", ["1100 entries"], None),
    # Whole numbers without separators (the names among them are left out: names_a_thing).
    ("01_text_data", "160"): ("printed", ["stride 4:  1286 windows,  160 batches"], None),
    ("01_text_data", "321"): ("printed", ["stride 2:  2571 windows,  321 batches"], None),
    ("01_text_data", "642"): ("printed", ["stride 1:  5141 windows,  642 batches"], None),
    ("01_text_data", "768"): ("specification", "768 numbers in GPT-2 small"),
    ("02_attention", "36"): ("computed", "6 * 6"),  # the six tokens' weights, each against each
    ("03_multihead_attention", "36"): ("computed", "3 * 12"),  # query, key and value of GPT-2 small's 12 heads
    ("04_gpt_model", "2048"): ("not a figure", "say `emb_dim` 2048"),  # a model of the student's own
    ("04_gpt_model", "15"): ("not a figure", "pick `n_heads` 15 with `emb_dim` 2048"),
    ("04_gpt_model", "620"): ("about", "163009536 * 4 / 1024 ** 2"),  # the maths beside it: 621.83 MB
    ("05_pretraining", "128"): [("computed", "cpu_run_setting('cfg')['emb_dim']"),
                                ("computed", "cpu_run_setting('cfg')['context_length']"),
                                ("practice", "tiles of 64 or 128 rows")],
    ("05_pretraining", "15"): ("specification", "| T4 (Colab's free GPU) | 7.5 | 15 GB |"),
    ("05_pretraining", "24"): ("specification", "| L4, A10G | 8.9, 8.6 | 24 GB |"),
    ("05_pretraining", "141"): ("specification", "| A100, H100, H200 | 8.0, 9.0, 9.0 | 40 to 141 GB |"),
    ("05_pretraining", "148"): ("computed", "160 - 12"),  # GPT-2's file: 160 tensors, 12 of them mask buffers
    ("05_pretraining", "180"): ("computed", "challenge_setting('TIME_LIMIT_S')"),
    ("05_pretraining", "35"): ("about", "math.exp(3.56)"),  # the perplexity of the book's loss
    ("05_pretraining", "50256"): ("computed", "gpt2_vocabulary() - 1"),  # <|endoftext|>, GPT-2's last id
    ("05_pretraining", "512"): ("printed", ["validation: 1 batch of [(2, 256)], 512 input tokens"], "512"),
    ("05_pretraining", "548"): ("specification", "`model.safetensors` (548 MB)"),  # the published file's size
    ("05_pretraining", "13"): ("recorded", "12.8"),  # the book's run on two cores, extrapolated (and run: 13 min)
    ("05_pretraining", "9"): ("recorded", "9.0"),  # the notebook's run against the book's, to a loss below 1
    ("06_sampling", "128"): [("computed", "cpu_run_setting('cfg')['emb_dim']"),
                             ("computed", "cpu_run_setting('cfg')['context_length']")],
    ("06_sampling", "14"): ("recorded", "14"),  # "8 to 14 ms" per token on the H100
    ("06_sampling", "300"): ("recorded", "300"),  # the CPU cache measurement's 300 tokens
    ("06_sampling", "49"): ("computed", "50 - 1"),  # k = 50 keeps the one good candidate and 49 others
    ("06_sampling", "50256"): ("computed", "gpt2_vocabulary() - 1"),
    ("06_sampling", "500"): ("about", "124412160 * 4 / 1e6"),  # GPT-2 small's weights (chapter 04) in float32
    ("06_sampling", "75"): ("about", "2 * 12 * 1024 * 768 * 4 / 1e6"),  # keys and values, 12 layers, 1,024 tokens
    ("06_sampling", "88"): ("about", "math.log(torch.finfo(torch.float32).max)"),  # where exp overflows
    ("06_sampling", "582"): ("printed", [" 582 x forward"], None),
    ("06_sampling", "343"): ("printed", [" 343 x toward"], None),
    ("06_sampling", "73"): ("printed", ["  73 x closer"], None),
    ("07_classification", "124"): ("specification", "GPT-2 small (124 million parameters)"),
    ("07_classification", "128"): ("computed", "cpu_run_setting('cfg')['emb_dim']"),
    ("07_classification", "130"): ("printed", ["batches: 130 training, 19 validation, 38 test"], "130"),
    ("07_classification", "149"): ("printed", ["training 1045, validation 149, test 300 messages"], "149"),
    ("07_classification", "300"): ("printed", ["training 1045, validation 149, test 300 messages"], "300"),
    ("07_classification", "150"): ("computed", "int(1494 * 0.8) - int(1494 * 0.7)"),  # np.split at 70 % and 80 %
    ("07_classification", "299"): ("computed", "1494 - int(1494 * 0.8)"),
    ("07_classification", "500"): ("about", "124412160 * 4 / 1e6"),  # GPT-2 small's weights in float32
    ("07_classification", "747"): ("printed", ["spam     747"], None),
    ("08_lora", "128"): ("computed", "cpu_run_setting('cfg')['emb_dim']"),
    ("08_lora", "149"): ("printed", ["1045 / 149 / 300 messages of 120 tokens"], "149"),
    ("08_lora", "300"): ("printed", ["1045 / 149 / 300 messages of 120 tokens"], "300"),
    ("09_instruction", "935"): ("printed", ["training 935, validation 110, test 55 entries"], "935"),
    ("09_instruction", "110"): ("printed", ["training 935, validation 110, test 55 entries"], "110"),
    ("09_instruction", "55"): ("printed", ["training 935, validation 110, test 55 entries"], "55"),
    # In the maths: worked examples and constants.
    ("01_text_data", "6.3"): ("computed", "2 * math.pi"),
    ("02_attention", "0.2365"): ("computed", "0.55 * 0.43"),
    ("02_attention", "0.1305"): ("computed", "0.87 * 0.15"),
    ("02_attention", "0.5874"): ("computed", "0.66 * 0.89"),
    ("02_attention", "0.167"): ("computed", "1 / 6"),
    ("02_attention", "0.1"): ("specification", "GPT-2 used $p = 0.1$"),
    ("04_gpt_model", "1.8708"): ("computed", "math.sqrt(3.5)"),
    ("04_gpt_model", "4.667"): ("computed", "14 / 3"),
    ("04_gpt_model", "0.01881"): ("computed", "0.0188 + 1e-5"),
    ("04_gpt_model", "0.9995"): ("computed", "0.0188 / 0.01881"),
    # 3/4 (a variance divided by n - 1) and where GELU has its minimum: the same number twice.
    ("04_gpt_model", "0.75"): [("computed", "3 / 4"), ("computed", "-gelu_minimum()[0]")],
    ("04_gpt_model", "0.17"): ("computed", "-gelu_minimum()[1]"),
    ("04_gpt_model", "0.9987"): ("computed", "phi(3)"),
    ("04_gpt_model", "0.0013"): ("computed", "phi(-3)"),
    ("04_gpt_model", "0.8413"): ("computed", "phi(1)"),
    ("04_gpt_model", "0.1587"): ("computed", "phi(-1)"),  # GELU(-1) = -0.1587
    ("04_gpt_model", "0.9772"): ("computed", "phi(2)"),
    ("04_gpt_model", "0.09"): ("computed", "-gelu_slope(-2.0)"),
    ("04_gpt_model", "0.7979"): ("computed", "math.sqrt(2 / math.pi)"),
    ("04_gpt_model", "2,362,368"): ("computed", "768 * 3072 + 3072"),  # the feed-forward's first layer
    ("04_gpt_model", "652,038,144"): ("computed", "163009536 * 4"),  # the untied model's bytes in float32
    ("04_gpt_model", "1.47"): ("computed", "48 * 12 * 1600 ** 2 / 1e9"),
    ("04_gpt_model", "2e-7"): ("printed", ["without shortcuts: 1.9e-07"], "1.9e-07"),
    ("04_gpt_model", "6e-4"): ("printed", ["9.5e-05  6.4e-04"], "6.4e-04"),
    ("04_gpt_model", "2e-5"): ("computed", "1 / 50257"),
    ("05_pretraining", "2e-5"): ("computed", "1 / 50257"),
    ("05_pretraining", "10.82"): ("computed", "math.log(50257)"),
    ("05_pretraining", "4e-5"): ("computed", "cpu_run_setting('initial_lr')"),
    ("05_pretraining", "4e-3"): ("computed", "cpu_run_setting('peak_lr')"),
    ("05_pretraining", "3.96e-3"): ("computed", "cpu_run_setting('peak_lr') - cpu_run_setting('initial_lr')"),
    ("05_pretraining", "1.926e-3"): ("computed", "4e-5 + 10 * 3.96e-3 / 21"),
    ("05_pretraining", "2.02e-3"): ("computed", "(cpu_run_setting('peak_lr') + cpu_run_setting('min_lr')) / 2"),
    ("05_pretraining", "0.37"): ("computed", "math.exp(-1)"),
    ("05_pretraining", "6e-8"): ("computed", "2 ** -24"),  # float16's smallest (subnormal) number
}


def small_model_share_of_embedding_and_head():
    """The share of chapter 05's small model held by its token embedding and output head."""
    from gptcourse import pretrain

    cfg = pretrain.cpu_run().cfg
    return 2 * cfg["vocab_size"] * cfg["emb_dim"] / 13673984  # the run prints its parameters: 13,673,984


NAMES["small_model_share_of_embedding_and_head"] = small_model_share_of_embedding_and_head


# A whole number written without separators (45, 2048). Some are names, not figures (names_a_thing).
WHOLE = re.compile(r"(?<![\w.,])\d+(?![\w%-]|[.,]\d|\s?%)")  # not 124M, 32-bit, 0.5, 1,024 or 10 %
LIST_MARKER = re.compile(r"^(\s*|#+\s*)\d+\.\s", re.M)  # "7. **The largest batch**", "## 7. Loading"
NAMING_WORD = re.compile(r"(?:chapters?|sections?|appendix|task|part)\s+(?:\d+\s*(?:,|and|to|or)\s*)*$", re.I)
CITED_YEAR = re.compile(r"(?:\(|, |Manning |al\. |from |published in )$")


SPLIT = re.compile(r"(?<![\w.,/])\d+(?:/\d+)+(?![\w/])")  # 70/10/20 into three sets, a 50/50 guess


def split_parts(split):
    """The parts of a split written as percentages that add up to 100 (70/10/20), else []."""
    parts = split.split("/")
    return parts if sum(int(part) for part in parts) == 100 else []


def names_a_thing(prose, match):
    """Whether a whole number in prose is a name rather than a figure: a chapter of the course
    (always written with two digits, 01 to 09), a chapter, section or appendix of the book, or
    the year of a publication (cited as "(2019)", ", 2023", "Manning 2024", "from 1908",
    "published in 2019")."""
    number, before = match.group(0), prose[:match.start()]
    if re.fullmatch(r"0[1-9]", number):
        return True
    if NAMING_WORD.search(before):
        return True
    return 1900 <= int(number) <= 2026 and len(number) == 4 and bool(CITED_YEAR.search(before))


# In maths: a decimal number, a power of ten written as a coefficient (2 \cdot 10^{-7}), or a
# whole number written with thousands separators (2{,}362{,}368).
MATH_FIGURE = re.compile(r"(?<![\w.}])\d{1,3}(?:\{,\}\d{3})+|(?<![\w.])\d+(?:\.\d+)?\s*\\cdot\s*10\^\{?-?\d+\}?"
                         r"|(?<![\w.])\d+\.\d+")
MATHS = re.compile(r"\$\$?([^$]*)\$\$?")


def written_as(math_figure):
    """A figure of the maths as the table writes it: 2 \\cdot 10^{-7} as 2e-7, 2{,}362{,}368 as 2,362,368."""
    return re.sub(r"\s*\\cdot\s*10\^\{?(-?\d+)\}?", r"e\1", math_figure).replace("{,}", ",")


def markdown_figures(path):
    """[(cell id, figure, the paragraph it stands in, on one line, whether it is in maths)] of a
    master's markdown cells: the figures of its prose (FIGURE, and WHOLE less the names) and of its
    maths (MATH_FIGURE)."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for paragraph in re.split(r"\n\s*\n", "".join(cell["source"])):
            context = re.sub(r"\s+", " ", paragraph)
            prose = re.sub(r"`[^`]*`|\$\$[^$]*\$\$|\$[^$]*\$|\]\([^)]*\)|https?://\S+", " ", paragraph)  # code, maths, links
            prose = LIST_MARKER.sub(" ", prose)
            figures = [(f"{part} %", False) for split in SPLIT.finditer(prose) for part in split_parts(split.group(0))]
            prose = SPLIT.sub(lambda split: " " if split_parts(split.group(0)) else split.group(0), prose)
            figures += [(re.sub(r"\s+", " ", m.group(0)), False) for m in FIGURE.finditer(prose)]
            figures += [(m.group(0), False) for m in WHOLE.finditer(prose) if not names_a_thing(prose, m)]
            figures += [(written_as(m.group(0)), True) for maths in MATHS.finditer(re.sub(r"`[^`]*`", " ", paragraph))
                        for m in MATH_FIGURE.finditer(maths.group(1))]
            found += [(cell.get("id"), figure, context, in_maths) for figure, in_maths in figures]
    return found


def code_of(path):
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "code")


def is_task_number(figure):
    from gptcourse.checking.tasks import TASKS

    return bool(TASK_NUMBER.match(figure)) and figure in {t.id for t in TASKS}


def digits_of(figure):
    return figure.rstrip(" %").replace(",", "")


def number_of(figure):
    return float(digits_of(figure))


def rounds_to(value, figure):
    """Whether `value` written with as many decimals as `figure` is the figure (for 2e-7: as
    many decimals of its coefficient)."""
    digits = digits_of(figure)
    if "e" in digits:
        decimals = len(digits.partition("e")[0].partition(".")[2])
        return f"{value:.{decimals}e}" == f"{float(digits):.{decimals}e}"
    decimals = len(digits.partition(".")[2])
    return f"{value:.{decimals}f}" == digits


def written_in_code(figure, code):
    """Whether the notebook's code writes the figure (a percentage also as a fraction: 70 % as 0.7)."""
    forms = [figure.rstrip(" %"), digits_of(figure)]
    if figure.endswith("%"):
        forms.append(f"{number_of(figure) / 100:g}")
    return any(re.search(rf"(?<![\w.]){re.escape(form)}(?![\d])", code) for form in forms)


def unaccounted(path):
    chapter, code = path.stem, code_of(path)
    return sorted({(chapter, figure) for _, figure, _, in_maths in markdown_figures(path)
                   if not (is_task_number(figure) and not in_maths) and not written_in_code(figure, code)
                   and (chapter, figure) not in ACCOUNTED})


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.stem)
def test_every_figure_is_accounted_for(path):
    assert unaccounted(path) == [], "say how each holds in ACCOUNTED (this file's docstring lists the ways)"
    stale = [(chapter, figure) for chapter, figure in ACCOUNTED if chapter == path.stem
             and figure not in {f for _, f, _, _ in markdown_figures(path)}]
    assert stale == [], "these figures left the text: drop their entries"


def paragraphs_with(chapter, figure):
    return [p for _, f, p, _ in markdown_figures(REPO / "solutions" / f"{chapter}.ipynb") if f == figure]


@pytest.mark.parametrize("chapter, figure", sorted(ACCOUNTED), ids=lambda v: str(v))
def test_each_accounted_figure_holds(chapter, figure):
    ways = ACCOUNTED[(chapter, figure)]
    for way in ways if isinstance(ways, list) else [ways]:
        holds(chapter, figure, way)


def holds(chapter, figure, way):
    how, *detail = way
    paragraphs = paragraphs_with(chapter, figure)
    if how == "printed":
        texts, value = detail
        printed = [n.replace(",", "") for text in texts for n in re.findall(r"[\d,]*\d(?:\.\d+)?(?:e-?\d+)?", text)]
        value = value or printed[-1]
        scales = re.compile(r"1e\d+|100$")  # millions, billions, percent
        assert all(n in printed for n in re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", value) if not scales.match(n)), \
            f"{value} must compute from what the run prints: {texts}"
        assert rounds_to(eval(value), figure), (value, eval(value))
    elif how == "computed":
        assert rounds_to(eval(detail[0], dict(NAMES)), figure), (detail[0], eval(detail[0], dict(NAMES)))
    elif how == "below":
        assert float(eval(detail[0], dict(NAMES))) < number_of(figure)
    elif how == "above":
        assert float(eval(detail[0], dict(NAMES))) > number_of(figure)
    elif how == "about":
        value = float(eval(detail[0], dict(NAMES)))
        assert math.isclose(value, number_of(figure), rel_tol=0.05), (detail[0], value)
    elif how == "recorded":
        benchmarks = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8").replace(",", "")
        numbers = re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", detail[0])
        assert all(n in benchmarks for n in numbers if n != "100"), f"not in docs/benchmarks.md: {numbers}"
        assert rounds_to(eval(detail[0]), figure), (detail[0], eval(detail[0]))
    elif how == "book":
        assert all("book" in paragraph for paragraph in paragraphs), f"the sentence must say it is the book's: {figure}"
    elif how in ("not a figure", "specification", "practice"):
        assert any(detail[0] in paragraph for paragraph in paragraphs), (detail[0], figure)
    else:
        raise AssertionError(f"unknown way {how!r}")


def printed_figures(chapter):
    """What the chapter's run must print for the figures its text quotes (test_masters_run checks)."""
    ways = [way for (name, _), entry in ACCOUNTED.items() if name == chapter
            for way in (entry if isinstance(entry, list) else [entry])]
    return [text for how, *detail in ways if how == "printed" for text in detail[0]]


def test_the_check_finds_a_figure_nobody_accounted_for(tmp_path):
    master = tmp_path / "05_pretraining.ipynb"
    master.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "id": "a", "source": [
            "The loss falls to 6.27 (Task 5.2), at `lr=0.02`, 10 % warmup, in 45 seconds.\n\n",
            "## 7. Chapter 06 and section 3 of the book (Radford et al., 2019) split 90/10: $$2{,}048$$"]},
        {"cell_type": "code", "id": "b", "source": ["lr, warmup = 0.02, 0.1\n"]}]}))
    assert unaccounted(master) == [("05_pretraining", "2,048"), ("05_pretraining", "45"), ("05_pretraining", "6.27"),
                                   ("05_pretraining", "90 %")]
