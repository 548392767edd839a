"""The grader's chapter module of chapter 09 (instruction fine-tuning): its public and hidden
cases and its known mistakes.

- 9.1: compared exactly. Entries with and without an input, an input of only whitespace (not
  empty: the section is there, the contract's "non-empty", the book's `if entry["input"]`; the
  task text says so), non-ASCII text, instructions and inputs over several lines, with braces (a
  str.format template must not read them), trailing spaces (kept), and entries with more keys
  than the three. Two prompts share their long first sentence, so the judge's generic
  "expected ..., got ..." would show the same text twice: the probe kind owns the prompt key
  (_Prompt.judge_key), and its message names the classic mistake (the Response header added too
  early, an Input section for an empty input, whitespace-only input treated as empty, stripped
  fields, single newlines), then shows the first line that differs, written with repr so that a
  missing blank line or a trailing space shows. The entry passed in must be left as it was
  (entry_after, recorded first).
- 9.2: batches as a DataLoader hands them over (lists of token-id lists) with uneven lengths,
  one entry, entries of one length (every row then ends with its one end-of-text target), an
  entry of one token, allowed_max_length shorter than the rows, longer than the rows and equal
  to them, another pad_token_id and ignore_index. The lists as the call left them are recorded
  first (batch_after: an entry padded in place changes the data set), then dtypes, shapes and
  the rows of inputs and targets; a wrong row is shown by the judge (the first that differs)
  with a hint on the mistake (no +1, the first padding masked too, nothing masked, no shift, the
  cut made before padding, left padding, fixed 50256/-100). The device is an argument: on the
  device pass the probe calls it with device="meta" and reports tensors that come back
  elsewhere (DeviceMixError), so a function that never moves its tensors is caught on a machine
  without a GPU. No entry holds pad_token_id itself (the task says so): where it did, "every
  padding token after the first" and "every pad_token_id after the first" would part ways.
"""
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.reference import reference_object

# ------------------------------------------------------------------------------------------
# 9.1 format_input
# ------------------------------------------------------------------------------------------

INSTRUCTIONS = ("Rewrite the sentence in passive voice.", "Translate the following sentence into French.",
                "What is the capital of Italy?", "Classify the following item as a fruit or a vegetable.",
                "Generate a synonym for 'happy'.", "Convert 45 kilometers to miles.",
                "Identify the correct spelling of the following word.", "Name the largest planet.")
INPUTS = ("The cat chased the mouse.", "Where is the library?", "Tomato", "Ocassion", "45 km",
          "He will finish the report tomorrow.")
OUTPUTS = ("The mouse was chased by the cat.", "Où est la bibliothèque ?", "Rome.", "Vegetable.", "Joyful.")


def _format_case(rng, label, instruction=None, input_text=None, **extra):
    entry = {"instruction": instruction if instruction is not None else str(rng.choice(INSTRUCTIONS)),
             "input": input_text if input_text is not None else "",
             "output": str(rng.choice(OUTPUTS))}
    entry.update(extra)
    return Case("9.1", "format", label, {"entry": entry})


def _with_input(rng, label, **keywords):
    return _format_case(rng, label, input_text=str(rng.choice(INPUTS)), **keywords)


# ------------------------------------------------------------------------------------------
# 9.2 custom_collate_fn
# ------------------------------------------------------------------------------------------

def _entries(rng, lengths, pad_token_id=50256, vocab=50257):
    """Token-id lists of the given lengths that never hold pad_token_id."""
    entries = []
    for length in lengths:
        ids = rng.integers(0, vocab - 1, size=length)
        entries.append([int(i) + (1 if i >= pad_token_id else 0) for i in ids])
    return entries


def _collate_case(rng, lengths, label, **settings):
    args = {"batch": _entries(rng, lengths, settings.get("pad_token_id", 50256)), **settings}
    shown = ", ".join(f"{key}={value}" for key, value in settings.items())
    return Case("9.2", "collate", f"{label}: entries of {list(lengths)} tokens" + (f", {shown}" if shown else ""),
                args)


def _uneven(rng, count, low=2, high=12):
    """Lengths with one longest entry and at least two different lengths."""
    while True:
        lengths = [int(n) for n in rng.integers(low, high, size=count)]
        if len(set(lengths)) > 1:
            return lengths


# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

PREAMBLE = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
            "request.")


def _mistakes_9_1():
    def with_response_header(entry):
        return reference_object("9.1")(entry) + "\n\n### Response:\n"

    def always_input(entry):
        return f"{PREAMBLE}\n\n### Instruction:\n{entry['instruction']}\n\n### Input:\n{entry['input']}"

    def stripped_input_test(entry):
        section = f"\n\n### Input:\n{entry['input']}" if entry["input"].strip() else ""
        return f"{PREAMBLE}\n\n### Instruction:\n{entry['instruction']}{section}"

    def single_newlines(entry):
        section = f"\n### Input:\n{entry['input']}" if entry["input"] else ""
        return f"{PREAMBLE}\n### Instruction:\n{entry['instruction']}{section}"

    def no_space_between_sentences(entry):
        return reference_object("9.1")(entry).replace("task. Write", "task.Write", 1)

    def stripped_text(entry):
        section = f"\n\n### Input:\n{entry['input'].strip()}" if entry["input"] else ""
        return f"{PREAMBLE}\n\n### Instruction:\n{entry['instruction'].strip()}{section}"

    return [
        ("the prompt ends with the '### Response:' header: the caller adds it", with_response_header),
        ("the '### Input:' section is there for an empty input too: only when entry['input'] is not empty",
         always_input),
        ("an input of only whitespace is treated as empty: the section is left out only for the empty string",
         stripped_input_test),
        ("the sections are separated by one newline: a blank line, '\\n\\n', before each header", single_newlines),
        ("the two sentences of the first line have no space between them", no_space_between_sentences),
        ("the instruction and input are stripped: use them as they are", stripped_text),
    ]


def _mistakes_9_2():
    import torch

    def collate(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu", *,
                extra=1, keep_first=True, mask=True, shift=True, cut_first=False, in_place=False, left=False):
        # The reference with one knob per classic mistake.
        if cut_first and allowed_max_length is not None:
            batch = [item[:allowed_max_length] for item in batch]
        length = max(len(item) for item in batch) + extra
        inputs_list, targets_list = [], []
        for item in batch:
            if in_place:
                item += [pad_token_id] * (length - len(item))
                padded = item
            else:
                padding = [pad_token_id] * (length - len(item))
                padded = padding + list(item) if left else list(item) + padding
            inputs = torch.tensor(padded[:-1] if shift else padded)
            targets = torch.tensor(padded[1:] if shift else padded)
            positions = torch.nonzero(targets == pad_token_id).flatten()
            hidden = positions[1:] if keep_first else positions
            if mask and hidden.numel() > 0:
                targets[hidden] = ignore_index
            if allowed_max_length is not None and not cut_first:
                inputs, targets = inputs[:allowed_max_length], targets[:allowed_max_length]
            inputs_list.append(inputs)
            targets_list.append(targets)
        return torch.stack(inputs_list).to(device), torch.stack(targets_list).to(device)

    def knob(**setting):
        def wrong(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
            return collate(batch, pad_token_id, ignore_index, allowed_max_length, device, **setting)
        return wrong

    def stays_on_cpu(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
        return collate(batch, pad_token_id, ignore_index, allowed_max_length, "cpu")

    def fixed_settings(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
        return collate(batch, 50256, -100, allowed_max_length, device)

    return [
        ("every entry is padded to the longest entry, not the longest plus one", knob(extra=0)),
        ("the first padding token of the targets is masked too: it must stay (the end-of-text to learn)",
         knob(keep_first=False)),
        ("no padding token is replaced by ignore_index", knob(mask=False)),
        ("the targets are not shifted: targets = padded[1:], inputs = padded[:-1]", knob(shift=False)),
        ("the entries are cut to allowed_max_length before padding and shifting: cut the rows afterwards",
         knob(cut_first=True)),
        ("the entries are padded in place: the batch's lists are changed", knob(in_place=True)),
        ("the padding is added before the entries (left padding): pad at the end", knob(left=True)),
        ("the tensors stay on the CPU: move them to device", stays_on_cpu),
        ("50256 or -100 is written out in place of pad_token_id or ignore_index: use the arguments", fixed_settings),
    ]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "9.1": GraderSpec(
        public=lambda rng: [
            _with_input(rng, "an entry with an input"),
            _format_case(rng, "an entry whose input is empty"),
            _format_case(rng, "non-ASCII text", instruction="Traduis « café » en anglais.", input_text="naïve — 日本"),
            _format_case(rng, "an input of two spaces (not empty: its section is there)", input_text="  "),
            _format_case(rng, "braces and a trailing space in the instruction",
                         instruction="Complete {name} and {{this}} in the sentence. "),
        ],
        hidden=lambda rng: [
            _with_input(rng, "an entry with an input"),
            _format_case(rng, "an entry whose input is empty"),
            _format_case(rng, "an input of three spaces (not empty: its section is there)", input_text="   "),
            _format_case(rng, "non-ASCII text", instruction="Écris le mot « grâce » à l'envers. 😀",
                         input_text="Größe, ñandú, 東京"),
            _format_case(rng, "an instruction over two lines and an input with a newline",
                         instruction="Summarise the text.\nUse one sentence.", input_text="Line one.\nLine two."),
            _format_case(rng, "braces and a trailing space in the instruction",
                         instruction="Fill in {blank} and {{this}} in the template. "),
            _with_input(rng, "an entry with an extra key", rejected="A worse answer."),
        ],
        mistakes=_mistakes_9_1),
    "9.2": GraderSpec(
        public=lambda rng: [
            _collate_case(rng, [5, 2, 3], "uneven entries"),
            _collate_case(rng, [6, 3], "allowed_max_length shorter than the rows", allowed_max_length=4),
            _collate_case(rng, [2, 4, 3], "another pad_token_id and ignore_index", pad_token_id=0, ignore_index=-1),
        ],
        hidden=lambda rng: [
            _collate_case(rng, _uneven(rng, 4), "uneven entries"),
            _collate_case(rng, [int(rng.integers(3, 9))], "a single entry"),
            _collate_case(rng, [5, 5, 5], "entries of one length"),
            _collate_case(rng, [1, 4], "an entry of one token"),
            _collate_case(rng, [9, 4, 6], "allowed_max_length shorter than the rows", allowed_max_length=5),
            _collate_case(rng, [3, 7], "allowed_max_length longer than the rows", allowed_max_length=20),
            _collate_case(rng, [4, 6, 2], "allowed_max_length equal to the row length", allowed_max_length=6),
            _collate_case(rng, _uneven(rng, 3), "another pad_token_id and ignore_index", pad_token_id=7,
                          ignore_index=-5),
            _collate_case(rng, [3, 8, 5], "another pad_token_id, a cut", pad_token_id=1, allowed_max_length=4),
        ],
        mistakes=_mistakes_9_2),
}
