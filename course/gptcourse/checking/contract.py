"""The course's contract, the part no code knows: what the checks hold each task to, and what
they leave to the student.

For every task of the course table (gptcourse/checking/course.py) one `Contract`: `pinned`, the
behaviour its cases check (a student may rely on these being checked, and on nothing else
being graded), and `free`, what every reasonable choice passes. Both are written from what the
chapter modules really check (`gptcourse/checking/chapters/chNN_name.py` and
`grader/chapters/chNN_name.py`); when a check changes, its entry here changes with it.
Per chapter, `REFERENCE_VALUES`: numbers of the book's runs that a test of the chapter
asserts, each with the test that does.

Everything else about a task is derived, never written here: its level, title and graded
names (the course table), its signatures and points (the master), where its pieces live (the
file conventions). `grader/authoring/contract.py` puts the two together: `python -m grader where <task>`
prints one task's section of docs/contract.md, which the build writes.

Plain data, no torch: reading it costs nothing.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Contract:
    pinned: tuple  # what the cases check, one short sentence each
    free: tuple = ()  # what they leave open: every choice named here passes


@dataclass(frozen=True)
class ReferenceValue:
    fact: str  # a number of the book's runs, in words
    test: str  # the test that asserts it: "tests/chapters/test_chNN.py::test_name"


# Rules that hold for every task: the page states them once, above the chapters.
COMMON_RULES = (
    "Numbers are compared with the reference's within a small tolerance (`tolerances` in "
    "gptcourse/checking/judge.py; a little more on a GPU); token ids, texts, counts and shapes exactly.",
    "A module is built with the case's arguments and then gets the case's weights copied in, parameter "
    "by parameter, by name: the names and shapes of its parameters are pinned, a parameter the task "
    "does not list fails, and how the parameters are initialised is free unless a task says otherwise.",
    "Cases come in float32 and float64, with batches of one and of several, and, for models, fewer "
    "tokens than the context length. A module's gradients (of its input and of every parameter) are "
    "checked with its output; a function's where its entry says so.",
    "Inputs must be left as they were given: a tensor, list, dict or DataFrame changed by the call fails.",
    "Modules and the functions that handle tensors run each case a second time on PyTorch's "
    "`meta` device, and on CUDA when the grader has a GPU: a tensor made inside the code on the CPU "
    "(a mask, positions, a batch never moved to `device`) fails on a machine without a GPU too.",
    "Random outputs are judged so that the order in which random numbers are drawn does not matter: "
    "every pattern of dropout that the right place for dropout can give is accepted, and samplers "
    "are judged by the distribution of many draws.",
    "A task is graded with the reference versions of the earlier tasks it builds on, so a mistake "
    "in an earlier task costs its points once.",
    "What a function prints, the names of helper functions and attributes the task does not list, "
    "and the style of the code are never graded.",
)


CHAPTER_01 = {
    "1.1": Contract(
        pinned=(
            "`encode` splits with the setup cell's `TOKEN_PATTERN`, strips every piece, drops the empty ones "
            "and maps each token to its id in the given vocabulary; a token the vocabulary lacks gets the id "
            "the vocabulary gives `<|unk|>` (its ids need not be sorted, and `<|unk|>` need not be last).",
            "`decode` joins the tokens with single spaces and then removes the whitespace in front of "
            "`, . : ; ? ! \" ( ) '`.",
            "Round trips on sentences the vocabulary was not built from, on a text of spaces only and on the "
            "empty text (no ids, empty string).",
        ),
        free=("Which attributes the tokenizer keeps (the book's `str_to_int` and `int_to_str` are a suggestion).",)),
    "1.2": Contract(
        pinned=(
            "The distinct tokens of the text, split as in 1.1, sorted, numbered from 0; then `<|endoftext|>` "
            "and `<|unk|>`, in that order, take the next two ids.",
            "The empty text gives the two special tokens alone.",
        ),
        free=("The order of the dict's entries: the dicts are compared as mappings.",)),
    "1.3": Contract(
        pinned=(
            "A `torch.utils.data.Dataset` over the text's ids from the given GPT-2 tokenizer; a window starts "
            "every `stride` tokens for as long as a full target fits.",
            "Item `i` is a pair of int64 tensors: `max_length` input ids and the same window shifted one token on.",
            "`len` is the number of windows, also when `stride` is larger than `max_length` and when exactly "
            "one window fits.",
        ),
        free=(
            "A text shorter than one window: an empty data set or an error, both pass (the book asserts).",
            "Whether the windows are made in `__init__` or when an item is read (the task text advises "
            "`__init__`, encoding the text once).",
        )),
    "1.4": Contract(
        pinned=(
            "The signature's defaults (`batch_size=4`, `max_length=256`, `stride=128`, `shuffle=True`, "
            "`drop_last=True`): one case calls it with the text alone.",
            "Windows as in 1.3 over GPT-2 tokens, and every argument passed on: with `shuffle=False` the batches "
            "in order; `drop_last` decides whether a short last batch is kept.",
            "`num_workers` passed on too: the returned loader's own `num_workers` is compared (no batch is read "
            "from that loader, so no worker process starts). The signature names it, the book passes it, and a "
            "loader that drops it silently loads with one process.",
        ),
        free=(
            "The order of a shuffled loader: it is judged by its sampler's class, the shapes of its batches "
            "and the sorted set of its windows.",
        )),
    "1.5": Contract(
        pinned=(
            "Token embeddings of the ids plus position embeddings of positions `0 .. num_tokens - 1`, "
            "broadcast over the batch; gradients reach both tables.",
            "The position table may be longer than the sequence; the positions live on the ids' device.",
        )),
}

CHAPTER_02 = {
    "2.1": Contract(
        pinned=(
            "Returns `(attn_weights, context_vecs)`, in that order; gradients flow back to the inputs.",
            "Raw dot products (no scaling), a softmax over the last dimension, then the weighted sum of the "
            "inputs; inputs of shape `(T, d)` and `(B, T, d)`.",
            "A softmax that stays finite for large scores: float64 cases hold scores past 709, where "
            "`exp(x) / exp(x).sum()` without subtracting the row's maximum overflows to NaN (in float32 it "
            "does past 88; the book shows that naive form and advises the stable one, `torch.softmax`).",
        )),
    "2.2": Contract(
        pinned=(
            "Parameters `W_query`, `W_key`, `W_value`, each an `nn.Parameter` of shape `(d_in, d_out)`, "
            "and no others.",
            "Scores divided by the square root of the keys' width before a softmax over the last dimension; "
            "one sequence `(T, d_in)` in, `(T, d_out)` out, `T = 1` included.",
        ),
        free=(
            "How the matrices are initialised and in which order they are made: the case's weights replace "
            "them (the task text asks for `torch.rand` in order so that the notebook's demo numbers match).",
        )),
    "2.3": Contract(
        pinned=(
            "`W_query`, `W_key`, `W_value` are `nn.Linear(d_in, d_out)` layers with a bias exactly when "
            "`qkv_bias=True`.",
            "The same computation as 2.2, on one sequence.",
            "A softmax that stays finite for large scores (as in 2.1): a hidden float64 case sets every query "
            "and key bias to 25, so that every score passes 709.",
        ),
        free=("The order in which the layers are made.",)),
    "2.4": Contract(
        pinned=(
            "Scores of shape `(..., T, T)` with any number of leading dimensions, `T = 1` included.",
            "Positions above the diagonal are hidden before the softmax, the scores are divided by "
            "`sqrt(d_k)`, the softmax runs over the last dimension: every row sums to 1 and future weights are 0.",
            "Large scores (past 88 in float32 and 709 in float64 after the division, close to each other) give "
            "finite weights, as in 2.1.",
            "The scores passed in stay unchanged; gradients flow back to them.",
        ),
        free=("Whether the scores are scaled before or after they are masked.",)),
    "2.5": Contract(
        pinned=(
            "`W_query`, `W_key`, `W_value` as in 2.3 and a registered buffer `mask` holding the causal pattern "
            "of `context_length`, cut to the input's `T` tokens in `forward`.",
            "Batched input `(B, T, d_in)` with `T` up to `context_length` (and `T = 1`); output `(B, T, d_out)`.",
            "Causal: an output at position t does not change when later tokens do.",
            "Dropout on the attention weights only, off in eval mode; with `dropout=0.0` train mode gives the "
            "eval-mode output.",
            "Large scores give finite outputs, as in 2.3 (a hidden float64 case with query and key biases of 25; "
            "the scores of a row stay within a few dozen of each other, so a softmax followed by zeroing the "
            "future and renormalising passes).",
        ),
        free=(
            "How the mask is written: ones above the diagonal (what to hide) or on and below it (what to keep), "
            "bool or float, with leading dimensions of size 1.",
            "How dropout draws its numbers (`nn.Dropout` or `F.dropout` with the module's training flag).",
        )),
}

CHAPTER_03 = {
    "3.1": Contract(
        pinned=(
            "`heads` is an `nn.ModuleList` of `num_heads` separate `CausalAttention` modules built with the "
            "given arguments.",
            "The heads' outputs are concatenated on the last dimension: width `num_heads * d_out`, for one to "
            "four heads; dropout as in 2.5, in every head; large scores as in 2.5.",
        )),
    "3.2": Contract(
        pinned=(
            "`W_query`, `W_key`, `W_value` (`d_in` to `d_out`, bias exactly with `qkv_bias`), `out_proj` "
            "(`d_out` to `d_out`, with bias) and the buffer `mask` as in 2.5.",
            "Head h works on features `h * head_dim` to `(h + 1) * head_dim` of the projections; each head's "
            "scores are divided by `sqrt(head_dim)`; the heads are put back in order and go through `out_proj`.",
            "Causal, dropout on the attention weights as in 2.5, `d_in` different from `d_out`, one to four heads; "
            "large scores as in 2.5.",
            "Building it with `d_out` not divisible by `num_heads` raises (any exception).",
        ),
        free=(
            "How the heads are split and merged (`view` and `transpose`, `reshape`, `einsum`), and which other "
            "attributes the module keeps (`head_dim`, `num_heads`).",
        )),
}

CHAPTER_04 = {
    "4.1": Contract(
        pinned=(
            "Parameters `scale` (ones) and `shift` (zeros) of size `emb_dim`, checked right after construction.",
            "Normalisation over the last dimension with the biased variance and `eps = 1e-5` inside the square "
            "root: cases hold a constant row and a row of tiny variance, where eps shows.",
            "Any number of leading dimensions; gradients to the input, `scale` and `shift`.",
        ),
        free=(
            "How the mean and the variance are computed (the task text asks for the computation written out; "
            "the checks see only the numbers).",
        )),
    "4.2": Contract(
        pinned=(
            "The tanh approximation of GELU with the constants `sqrt(2 / pi)` and `0.044715`: the exact erf "
            "form is close, and fails.",
            "Tensors of any shape, float32 and float64, gradients; the module has no parameters.",
            "Finite for any finite input: about `x` for large positive `x`, about 0 for large negative `x`. Cases "
            "run from -60 to 60 in float32 and from -200 to 200 in float64, where a tanh written by hand as "
            "`(exp(u) - exp(-u)) / (exp(u) + exp(-u))` overflows to NaN.",
        )),
    "4.3": Contract(
        pinned=(
            "`layers` is an `nn.Sequential` of a `Linear(emb_dim, 4 * emb_dim)`, a GELU and a "
            "`Linear(4 * emb_dim, emb_dim)`, both linear layers with a bias.",
            "The output is `layers(x)`; only `cfg[\"emb_dim\"]` is read.",
        ),
        free=("Which GELU module sits in the middle, as long as it computes the tanh form.",)),
    "4.4": Contract(
        pinned=(
            "Attributes `att` (a `MultiHeadAttention` over `emb_dim` with the configuration's heads, context "
            "length, dropout and `qkv_bias`), `ff` (a `FeedForward`), `norm1` and `norm2` (two separate "
            "`LayerNorm`s) and `drop_shortcut` (an `nn.Dropout` of `drop_rate`).",
            "Pre-LayerNorm: for the attention, then for the feed-forward sub-block, normalise, apply it, drop "
            "out its output with `drop_shortcut`, add the sub-block's input.",
            "In train mode every row must be explained by dropping features of the two sub-blocks' outputs "
            "(never of the shortcut, never of the sum).",
        ),
        free=("The order in which the attributes are made.",)),
    "4.5": Contract(
        pinned=(
            "Attributes `tok_emb`, `pos_emb`, `drop_emb`, `trf_blocks` (an `nn.Sequential` of `n_layers` "
            "separate blocks), `final_norm` and `out_head` (`emb_dim` to `vocab_size`, no bias).",
            "Logits `(B, T, vocab_size)` for `T` up to the context length; `drop_emb` on the sum of the two "
            "embeddings, before the blocks.",
            "A separate `out_head` (no weight tying): 163,009,536 parameters for `GPT_CONFIG_124M`, counted on "
            "the meta device part by part, and the right count with `qkv_bias=True`.",
        )),
    "4.6": Contract(
        pinned=(
            "Greedy: at each of the `max_new_tokens` steps the sequence is cut to its last `context_size` "
            "tokens, the largest logit of the last position is taken and appended.",
            "Returns the input followed by the new tokens (the input alone for `max_new_tokens=0`), leaves "
            "`idx` unchanged, and runs the model without gradients.",
        ),
        free=(
            "Whether the function switches the model to eval mode: the caller does, and the checks do not look.",
        )),
}

CHAPTER_05 = {
    "5.1": Contract(
        pinned=(
            "`text_to_token_ids` returns the GPT-2 ids of the text as an integer tensor of shape "
            "`(1, num_tokens)`, `<|endoftext|>` allowed (the single id 50256).",
            "`token_ids_to_text` decodes such a tensor back to the text; the tensor passed in stays unchanged.",
        ),
        free=(
            "Which integer dtype the ids have (the task text asks for int64).",
            "What the empty text gives: no case encodes it. The book's `torch.tensor(ids)` makes an empty list "
            "a float32 tensor, while the task text (and the reference, with `dtype=torch.long`) gives int64 ids.",
        )),
    "5.2": Contract(
        pinned=(
            "The mean cross-entropy over every position of every sequence, as a 0-d tensor that gradients "
            "flow back through.",
            "Both batches arrive on the CPU and are moved to `device`; the model is a tiny language model or "
            "a small `GPTModel`.",
        )),
    "5.3": Contract(
        pinned=(
            "The mean of the batch losses over the first `num_batches` batches: all of them for `None` or a "
            "number larger than the loader's length.",
            "`nan` for an empty loader.",
        ),
        free=(
            "A Python number or a 0-d tensor.",
            "Whether the function switches the model's mode or turns gradients off.",
        )),
    "5.4": Contract(
        pinned=(
            "One optimizer step per batch of every epoch (gradients zeroed each time), and as many training "
            "forward passes, in train mode with gradients.",
            "Evaluation right after steps 0, `eval_freq`, `2 * eval_freq`, ... over `eval_iter` batches of each "
            "loader, in eval mode without gradients, then back to train mode.",
            "Returns `(train_losses, val_losses, tokens_seen)`, one entry per evaluation, with the input "
            "tokens counted up to that step; the model ends in train mode with the reference's weights "
            "(small float64 cases, AdamW).",
        ),
        free=(
            "What it prints and how the sample after each epoch is made.",
            "How many evaluation forward passes it makes (the losses decide).",
        )),
    "5.5": Contract(
        pinned=(
            "A checkpoint written by `save_checkpoint` and read back by `load_checkpoint` restores the model's "
            "parameters and, when an optimizer is given, its state (AdamW's moments included) into a fresh "
            "model and optimizer; the file's name may hold a space.",
            "Loading refuses a file that carries a pickled object and never runs it (`weights_only=True`).",
        ),
        free=(
            "The file's layout and its keys: only your own `load_checkpoint` reads it.",
            "What `load_checkpoint` returns.",
        )),
    "5.6": Contract(
        pinned=(
            "Every parameter of the `GPTModel` (with `qkv_bias=True`, one to three blocks, any width) gets its "
            "value from the Hugging Face checkpoint: `c_attn` split into query, key and value, the Conv1D "
            "matrices transposed, LayerNorm weight and bias to `scale` and `shift`, `out_head` from `wte`; "
            "the loaded model gives the reference's logits.",
            "The checkpoint may hold the `h.N.attn.bias` mask buffers or not; its tensors stay unchanged, by the "
            "call and afterwards: the loaded model's parameters are then changed in place (as an optimizer step "
            "does) and the checkpoint must not change with them, so a parameter that wraps the checkpoint's own "
            "tensor, or a view of it, fails.",
            "A tensor of the wrong shape raises (any exception).",
        ),
        free=(
            "Whether `out_head` shares the token embedding's tensor or gets a copy of it.",
            "The error's message (naming the tensor is advised, not graded).",
        )),
    "5.7": Contract(
        pinned=(
            "`lr_at_step`: linear warmup from `initial_lr` to `peak_lr` over `warmup_steps` steps, then a "
            "cosine from `peak_lr` down towards `min_lr` at `total_steps`; a warmup of one step and a rate "
            "that starts at the peak included.",
            "`train_model`: the peak is the optimizer's rate when it is called; before each step the "
            "schedule's rate is set on every parameter group; the gradient norm is clipped to 1.0 once "
            "warmup is over, never before.",
            "Returns the three lists of 5.4 and the rate of every step; everything else as in 5.4.",
        ),
        free=(
            "Whether clipping starts at the step where warmup ends or at the one after (the book's).",
        )),
}

CHAPTER_06 = {
    "6.1": Contract(
        pinned=(
            "A softmax over the last dimension of `logits / temperature`, for any leading dimensions and "
            "temperatures from 0.003 to 50, without overflow.",
            "A logit of `-inf` comes out as probability 0; gradients flow back; the logits stay unchanged.",
        )),
    "6.2": Contract(
        pinned=(
            "In every row, logits below the row's k-th largest become `-inf`, the others keep their values; "
            "ties with the k-th value stay, so a row can keep more than k.",
            "`k = 1` and `k = vocab_size`, rows that already hold `-inf`, any leading dimensions; the logits "
            "passed in stay unchanged.",
        )),
    "6.3": Contract(
        pinned=(
            "Each row keeps its most probable tokens, in order, up to and including the one whose running "
            "total reaches `p`; the rest become `-inf`, the kept logits keep their values.",
            "At least one token stays, also for `p = 0` and for a `p` below the top probability; rows that "
            "already hold `-inf`; any leading dimensions; the logits passed in stay unchanged.",
            "Large logits (a hidden float32 case with every logit about 100): the probabilities come from a "
            "softmax that does not overflow.",
        ),
        free=(
            "The order among tokens of equal probability: no case puts a tie at the cut, and no running "
            "total within 2e-3 of `p`.",
        )),
    "6.4": Contract(
        pinned=(
            "Each step crops to the last `context_size` tokens and reads the last position's logits, without "
            "gradients; `temperature == 0` picks the largest logit (whatever `top_k` and `top_p` say).",
            "Otherwise top-k, then top-p, then the softmax with the temperature, and a draw from that "
            "distribution: 20,000 draws must fit it (and not the other orders).",
            "With `eos_id`, generation stops once every row has produced it among its new tokens (one already "
            "in the prompt does not count); without it, exactly `max_new_tokens` tokens are added.",
        ),
        free=(
            "What a row holds after its first `eos_id`, and whether the step that finishes the last row appends "
            "its token (the book breaks first).",
            "How the draw is made, as long as it follows the distribution.",
        )),
    "6.5": Contract(
        pinned=(
            "Everything of 3.2 (parameters, `mask`, dropout, the error for `d_out` not divisible by "
            "`num_heads`, large scores), and without the cache the outputs of `MultiHeadAttention` with the same "
            "weights.",
            "With `use_cache=True` the keys and values of the tokens seen so far are kept in `cache_k` and "
            "`cache_v`: a sequence fed in chunks of any sizes gives the outputs of feeding it whole.",
            "`reset_cache()` sets both to `None` and the next call starts at position 0; a second sequence may "
            "run up to `context_length` tokens.",
            "A chunk that would go past `context_length` is refused by the student's own `raise` or `assert` "
            "(an error from inside PyTorch does not count).",
            "Dropout on the attention weights on both paths; none in eval mode.",
            "Large scores on both paths, as in 3.2: a hidden float64 case feeds a sequence in chunks with every "
            "query and key bias set to 25.",
        ),
        free=(
            "The state of the cache after a refused call.",
            "Whether the class subclasses the chapter 03 module or is written whole.",
        )),
}

CHAPTER_07 = {
    "7.1": Contract(
        pinned=(
            "`create_balanced_dataset`: every spam row and as many ham rows, drawn with "
            "`sample(..., random_state=123)` from the ham rows; columns `Label` and `Text`.",
            "`random_split`: the rows shuffled with `sample(frac=1, random_state=123)`, then the first "
            "`int(n * train_frac)` rows, the next `int(n * validation_frac)`, and the rest; each part's rows "
            "in that order.",
            "Neither function changes the DataFrame it is given.",
        ),
        free=(
            "The order of the balanced rows (compared as a set) and whether the parts are renumbered.",
            "Cutting the validation part at `int(n * (train_frac + validation_frac))` instead.",
            "Any shuffle that draws as pandas does with seed 123 (NumPy's `RandomState(123).permutation` does).",
        )),
    "7.2": Contract(
        pinned=(
            "Reads the CSV file (commas, quotes, line breaks and non-ASCII text in the messages) and encodes "
            "every message once, in `__init__`.",
            "Every item has the same length: the longest message for `max_length=None`, else `max_length`, "
            "cutting longer messages at the end and padding shorter ones at the end with `pad_token_id`.",
            "An item is `(token_ids, label)`: an int64 tensor and an integer label; a `DataLoader` stacks every "
            "item into int64 batches.",
        ),
        free=("Whether the label is a Python `int`, a NumPy integer or a 0-d integer tensor.",)),
    "7.3": Contract(
        pinned=(
            "Changes the given model in place: every parameter frozen, then `out_head` replaced by a new "
            "`nn.Linear(emb_dim, num_classes)` with bias, then the last block and `final_norm` made trainable.",
            "No other parameter is removed or changes its value; models of one to three blocks, some already "
            "partly frozen.",
        ),
        free=("What it returns, as long as it is not another model.",)),
    "7.4": Contract(
        pinned=(
            "Both read the prediction from the last token's logits.",
            "`calc_loss_batch_cls`: the mean cross-entropy against the labels, as a tensor gradients flow "
            "through, with both batches moved to `device`.",
            "`calc_accuracy_loader`: the fraction of messages (not batches) predicted right over the first "
            "`num_batches` batches (all for `None` or more), with the model in eval mode and no gradients, "
            "whatever mode it was given in.",
        ),
        free=("Whether the accuracy is a Python number or a 0-d tensor.",)),
    "7.5": Contract(
        pinned=(
            "The model's last call gets one batch of one message: its ids cut to `min(max_length, context "
            "length)` and padded at the end with `pad_token_id` to that length, on `device`.",
            "Eval mode and no gradients, whatever mode the model was given in; `\"spam\"` when class 1 wins "
            "at the last token, `\"not spam\"` otherwise.",
        )),
}

CHAPTER_08 = {
    "8.1": Contract(
        pinned=(
            "Parameters `A` of shape `(in_dim, rank)` and `B` of shape `(rank, out_dim)`, `B` all zeros when made.",
            "`A` drawn uniformly from `[-1/sqrt(rank), 1/sqrt(rank)]`, judged by its distribution on a layer of "
            "at least 8,192 values (a correct layer fails with probability at most 1e-6).",
            "`forward` gives `alpha * (x @ A @ B)` (no division by `rank`) for any leading dimensions.",
        ),
        free=("How `A` is drawn, as long as the distribution is that one.",)),
    "8.2": Contract(
        pinned=(
            "Attributes `linear`, the very layer given (not a copy), and `lora`, a `LoRALayer` of the layer's "
            "sizes; `forward` is `linear(x) + lora(x)`.",
            "Right after construction its output is exactly the wrapped layer's.",
        ),
        free=("Whether `__init__` freezes the wrapped layer.",)),
    "8.3": Contract(
        pinned=(
            "Every `nn.Linear`, however deeply nested (in an `nn.Sequential`, an `nn.ModuleList`, a block of a "
            "block), is replaced in its place by a `LinearWithLoRA` around that very layer, exactly once; "
            "every other module stays where it was.",
            "The output is unchanged right after, and A and B stay trainable: GPT-2 small with a 2-class head "
            "at rank 16 and its base frozen has 2,666,528 trainable parameters.",
        )),
}

CHAPTER_09 = {
    "9.1": Contract(
        pinned=(
            "The Alpaca prompt exactly: the fixed first sentence, a blank line, `### Instruction:` and the "
            "instruction; a blank line, `### Input:` and the input only when the input is not the empty "
            "string; no Response header, no newline at the end.",
            "Fields are used as they are: an input of spaces is not empty, trailing spaces stay, braces in "
            "the text stay; the entry is left unchanged, extra keys included.",
        )),
    "9.2": Contract(
        pinned=(
            "Every entry padded with `pad_token_id` to the longest entry's length plus one; inputs drop the "
            "last token, targets the first.",
            "In each row of targets every padding token after the first becomes `ignore_index`.",
            "With `allowed_max_length`, rows are cut to that many tokens after padding and shifting.",
            "Two `torch.long` tensors on `device`; the lists of `batch` stay unchanged.",
        ),
        free=(
            "Whether padding is masked by position or by value: no entry holds `pad_token_id` itself.",
        )),
}

# Every task's contract, in course order.
TASKS = {**CHAPTER_01, **CHAPTER_02, **CHAPTER_03, **CHAPTER_04, **CHAPTER_05, **CHAPTER_06, **CHAPTER_07,
         **CHAPTER_08, **CHAPTER_09}


REFERENCE_VALUES = {
    "01_text_data": (
        ReferenceValue("The Verdict (`the-verdict`) has 20,479 characters, and its vocabulary (1.2) 1,132 entries.",
                       "tests/chapters/test_ch01.py::"
                       "test_the_verdict_vocabulary_and_tokenizer_round_trip"),
        ReferenceValue("In GPT-2 tokens The Verdict is 5,145 ids, starting "
                       "`[40, 367, 2885, 1464, 1807, 3619, 402, 271, 10899, 2138]`; "
                       "`\"Hello, do you like tea? <|endoftext|> In the sunlit terraces\"` is "
                       "`[15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]`; "
                       "the first batch of `create_dataloader_v1` with `batch_size=8, max_length=4, stride=4, "
                       "shuffle=False` starts `[[40, 367, 2885, 1464], [1807, 3619, 402, 271], ...]`.",
                       "tests/chapters/test_ch01.py::"
                       "test_the_verdict_with_gpt2_tokens_windows_and_first_batch"),
    ),
    "04_gpt_model": (
        ReferenceValue("`GPTModel(GPT_CONFIG_124M)` has 163,009,536 parameters, 124,412,160 without `out_head`.",
                       "tests/chapters/test_ch04.py::"
                       "test_gpt2_small_has_163_million_parameters_124_million_with_weight_tying"),
    ),
    "05_pretraining": (
        ReferenceValue("An untrained `GPTModel` of chapter 05's configuration (context 256) has a validation loss "
                       "of about 10.98 on the last 10 % of The Verdict (the book: 10.981).",
                       "tests/chapters/test_ch05.py::"
                       "test_the_untrained_validation_loss_on_the_verdict_is_about_10_99"),
    ),
    "07_classification": (
        ReferenceValue("The SMS Spam Collection holds 5,574 messages, 4,827 ham and 747 spam.",
                       "tests/chapters/test_ch07.py::"
                       "test_the_sms_collection_has_5574_messages_and_default_quoting_merges_three_of_them"),
        ReferenceValue("Balanced: 747 + 747 rows; split 70/10/20: 1,045, 149 and 300 rows.",
                       "tests/chapters/test_ch07.py::"
                       "test_balancing_and_the_70_10_20_split_give_747_747_and_1045_149_300"),
    ),
    "08_lora": (
        ReferenceValue("GPT-2 small with a 2-class head, its base frozen, has 2,666,528 trainable parameters "
                       "after `replace_linear_with_lora` at rank 16.",
                       "tests/chapters/test_ch08.py::"
                       "test_lora_on_gpt2_small_with_a_2_class_head_trains_2_666_528_parameters"),
    ),
    "09_instruction": (
        ReferenceValue("The instruction data has 1,100 entries, split 935 / 110 / 55 (train, validation, test).",
                       "tests/chapters/test_ch09.py::"
                       "test_the_instruction_data_has_1100_entries_split_935_110_55"),
    ),
}


def contract_of(task_id):
    """The task's Contract; a KeyError that says where to add one when it has none."""
    try:
        return TASKS[task_id]
    except KeyError:
        raise KeyError(f"task {task_id} has no contract: add its entry to TASKS in "
                       f"gptcourse/checking/contract.py") from None


def reference_values(chapter):
    """The chapter's reference values (none for most chapters)."""
    return REFERENCE_VALUES.get(chapter, ())
