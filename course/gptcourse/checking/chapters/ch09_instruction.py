"""Chapter 09, instruction fine-tuning: its tasks, their probes and the hints.

- 9.1 format_input returns a string, compared exactly; a difference is shown as the first line
  that differs, with the characters written out (a missing blank line or a trailing space is
  otherwise invisible), and named when it is a classic one (the Input section for an empty
  input, the Response header added too early).
- 9.2 custom_collate_fn gets a batch as a DataLoader hands it over: a list of lists of token
  ids. The lists as the call left them are recorded first (an entry padded in place changes the
  dataset's own data), then the dtypes, shapes and values of inputs and targets; a difference
  is shown as the first row that differs. The device is an argument: on the device pass it is
  "meta", and tensors that come back elsewhere are reported.
"""
import torch

from gptcourse.checking import kinds
from gptcourse.checking.probes import DeviceMixError, ProbeFailure
from gptcourse.tokenizer import GPT2_FILES
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.contract import Contract, ReferenceValue

CHAPTER = "09_instruction"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = GPT2_FILES


# The prompt's fixed parts (what the hints compare against; the task text shows them too).
PREAMBLE = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
            "request.")
INSTRUCTION_HEADER = "### Instruction:"
INPUT_HEADER = "### Input:"
RESPONSE_HEADER = "### Response:"


# ------------------------------------------------------------------------------------------
# 9.1 format_input
# ------------------------------------------------------------------------------------------

def format_arguments(probe):
    """format_input(entry) on a copy of the case's entry (kept to see whether it was changed)."""
    probe.kept["entry"] = dict(probe.case.args["entry"])
    return [probe.kept["entry"]], {}


def record_prompt(probe):
    """The entry as the call left it, then the returned prompt (a str)."""
    probe.record_value("entry_after", dict(probe.kept["entry"]), "the entry passed in, after the call")
    if not isinstance(probe.result, str):
        advice = ": return the string (print only shows it)" if probe.result is None else ""
        raise ProbeFailure(f"format_input should return a str, got {type(probe.result).__name__}{advice}")
    probe.record_value("prompt", probe.result, "the returned prompt")


def first_difference(got, expected):
    """(line number from 1, the got line, the expected line) of the first line that differs, a
    line being None past the end of its text; None when the texts are equal."""
    got_lines, expected_lines = got.split("\n"), expected.split("\n")
    for number in range(max(len(got_lines), len(expected_lines))):
        have = got_lines[number] if number < len(got_lines) else None
        want = expected_lines[number] if number < len(expected_lines) else None
        if have != want:
            return number + 1, have, want
    return None


def _show(line):
    return "(no such line: the text ends before it)" if line is None else repr(line)


def _entry_hint(key, got, expected, case):
    if key != "entry_after":
        return ""
    return ("the entry passed in was changed: read entry['instruction'] and entry['input'] without assigning "
            "into the entry or popping its keys (it belongs to the data set)")


class _Prompt(kinds.Function):
    """kinds.Function whose returned prompt is judged here: two prompts share their long first
    sentence, so the judge's generic "expected ..., got ..." (cut at 200 characters) would show
    the same text twice. The message names the mistake and shows the first line that differs."""

    def owns(self, key):
        return key == "prompt"

    def judge_key(self, key, got, expected, case):
        have, want = got.get(key), expected.get(key)
        if have == want:
            return None
        line, got_line, wanted_line = first_difference(have, want)
        return (f"The returned prompt: {_why_prompt_differs(have, want, case.args['entry'])}. First difference in "
                f"line {line}: yours {_show(got_line)}, expected {_show(wanted_line)}")


def _why_prompt_differs(have, want, entry):
    """What the classic mistakes look like; the line shown after it pins the rest down."""
    given_input = entry.get("input", "")
    if RESPONSE_HEADER in have and RESPONSE_HEADER not in want:
        return ("format_input ends after the instruction (and the input, when there is one): the '### Response:' "
                "header is added by the code that calls it, with the response after it")
    if entry.get("output") and entry["output"] in have and entry["output"] not in want:
        return "the prompt contains the response (entry['output']): format_input formats the instruction and input"
    if INPUT_HEADER in have and INPUT_HEADER not in want:
        return ("entry['input'] is empty here, so the prompt has no '### Input:' section: add it only when the "
                "input is not the empty string (if entry['input']: ...)")
    header = _header_written_differently(have, want)
    if header:
        return (f"the header line reads exactly {header!r}, on a line of its own: three '#', a space, the word and "
                f"a colon, nothing after it (the text follows on the next line)")
    if INPUT_HEADER in want and INPUT_HEADER not in have:
        if given_input.strip() == "":
            return (f"entry['input'] is {given_input!r}: whitespace, but not the empty string, so the '### Input:' "
                    f"section is there, holding it as it is (test `if entry['input']:`, without strip())")
        return "entry['input'] is not empty here: add the section '\\n\\n### Input:\\n' followed by the input"
    for field in ("instruction", "input"):
        text = entry.get(field, "")
        if text and text != text.strip() and text not in have and text.strip() in have:
            return (f"entry[{field!r}] lost its whitespace ({text!r} is used as it is, spaces and all): don't "
                    f"strip() it")
    if have.strip() == want.strip() and have != want:
        return "the right text with extra or missing whitespace at its start or end: nothing before or after it"
    if have.replace("\n\n", "\n") == want.replace("\n\n", "\n"):
        return ("the sections are separated by a blank line: two newlines, '\\n\\n', before each '### ...' header "
                "(one newline after the header)")
    if not have.startswith(PREAMBLE):
        return (f"the prompt starts with the sentence, exactly: {PREAMBLE!r} (two sentences, one space between "
                f"them)")
    return "compare your prompt with the format in the task, character by character"


def _header_written_differently(have, want):
    """The header expected at the first line that differs, when that line of the prompt is the
    same header written another way ('### Instruction', '## Input:', '### Input: text'); else None."""
    line, got_line, wanted_line = first_difference(have, want)
    if wanted_line not in (INSTRUCTION_HEADER, INPUT_HEADER) or got_line is None:
        return None
    word = wanted_line.strip("#: ").lower()
    letters = "".join(ch for ch in got_line.lower() if ch.isalnum())
    return wanted_line if letters.startswith(word) else None


# ------------------------------------------------------------------------------------------
# 9.2 custom_collate_fn
# ------------------------------------------------------------------------------------------

COLLATE_SETTINGS = ("pad_token_id", "ignore_index", "allowed_max_length")


def collate_arguments(probe):
    """custom_collate_fn(batch, [settings], device=...): the batch is a list of lists of token
    ids (what the DataLoader gives from a data set of token-id lists), a copy the call may
    change; the settings the case names are passed by keyword."""
    probe.kept["batch"] = [list(entry) for entry in probe.case.args["batch"]]
    keywords = {key: probe.case.args[key] for key in COLLATE_SETTINGS if key in probe.case.args}
    keywords["device"] = probe.case.device
    return [probe.kept["batch"]], keywords


def record_collated(probe):
    """The batch as the call left it, then dtypes, shapes and values of inputs and targets."""
    probe.record_value("batch_after", [list(entry) for entry in probe.kept["batch"]], "the batch passed in, after the call")
    result = probe.result
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ProbeFailure("custom_collate_fn should return two tensors, (inputs, targets), got "
                           + type(result).__name__ + (f" of length {len(result)}" if isinstance(result, (tuple, list))
                                                      else ""))
    for name, value in zip(("inputs", "targets"), result):
        if not isinstance(value, torch.Tensor):
            raise ProbeFailure(f"the {name} should be a tensor (one row per entry), got {type(value).__name__}")
        if not same_device(value.device, probe.device):
            raise DeviceMixError(
                f"the {name} came back on the {value.device.type}, but the call asked for device="
                f"{probe.case.device!r}: move both tensors with .to(device) before returning them")
    inputs, targets = result
    probe.record_value("dtypes", {"inputs": _dtype(inputs), "targets": _dtype(targets)},
                   "the dtypes of inputs and targets")
    probe.record_value("shapes", {"inputs": list(inputs.shape), "targets": list(targets.shape)},
                   "the shapes of inputs and targets")
    probe.record_value("inputs", _rows(inputs), "the inputs, row by row")
    probe.record_value("targets", _rows(targets), "the targets, row by row")


def same_device(actual, wanted):
    """Whether a tensor's device is the one asked for: "cuda" asks for the current GPU, and a
    tensor there reports "cuda:0", which torch.device("cuda") does not equal."""
    return actual.type == wanted.type and (wanted.index is None or actual.index == wanted.index)


def _dtype(tensor):
    return str(tensor.dtype).replace("torch.", "")


def _rows(tensor):
    return tensor.detach().cpu().tolist() if tensor.dim() >= 1 else tensor.item()


def _first_row_difference(have, want):
    for row, (got_row, wanted_row) in enumerate(zip(have, want)):
        if got_row != wanted_row:
            return row, got_row, wanted_row
    return None


def _collate_settings(case):
    return (case.args.get("pad_token_id", 50256), case.args.get("ignore_index", -100),
            case.args.get("allowed_max_length"))


def _collate_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    pad, ignore, allowed = _collate_settings(case)
    batch = case.args["batch"]
    longest = max(len(entry) for entry in batch)
    if key == "batch_after":
        return ("the lists passed in were changed (the entry padded in place, say): the batch holds the data set's "
                "own lists, so work on copies, item + [pad_token_id] or list(item), not item += ... or "
                "item.append(...)")
    if key == "dtypes":
        return ("inputs and targets must hold integers (torch.long): they are token ids and class numbers for "
                "cross_entropy; torch.tensor of a list of ints gives int64")
    if key == "shapes" and isinstance(have, dict) and isinstance(want, dict):
        return _shape_hint(have, want, longest, allowed)
    if key not in ("inputs", "targets") or not isinstance(have, list) or not isinstance(want, list):
        return ""
    if got.get("inputs") == expected.get("targets") and got.get("targets") == expected.get("inputs"):
        return ("inputs and targets are swapped: return (inputs, targets) in that order, the inputs (padded[:-1]) "
                "first")
    where = _first_row_difference(have, want)
    if where is None:
        return ""
    row, got_row, wanted_row = where
    return f"row {row}: {_row_hint(key, got_row, wanted_row, batch[row], pad, ignore, allowed)}"


def _shape_hint(have, want, longest, allowed):
    got_inputs, got_targets = have.get("inputs"), have.get("targets")
    want_length = want["inputs"][1] if len(want.get("inputs", [])) == 2 else None
    if got_inputs != got_targets:
        if allowed is not None and want_length is not None and want_length == allowed and want_length in (
                _row_length(got_inputs), _row_length(got_targets)):
            return (f"inputs {got_inputs} and targets {got_targets} differ in shape: with allowed_max_length set, "
                    f"cut both of them, inputs[:allowed_max_length] and targets[:allowed_max_length]")
        return (f"inputs {got_inputs} and targets {got_targets} differ in shape: pad every entry to the same "
                f"length, then take inputs = padded[:-1] and targets = padded[1:], one token shorter each")
    if not isinstance(got_inputs, list) or len(got_inputs) != 2 or want_length is None:
        return "inputs and targets are (batch, length) tensors: one row per entry, stacked"
    length = got_inputs[1]
    if allowed is not None and allowed < longest + 1 and length == min(allowed, longest) - 1:
        return ("with allowed_max_length set, cut inputs and targets to allowed_max_length after shifting, "
                "inputs[:allowed_max_length] (not one token less)")
    if allowed is not None and want_length == allowed and length == allowed + 1:
        return ("with allowed_max_length set, inputs and targets keep exactly allowed_max_length tokens a row, "
                "inputs[:allowed_max_length] (not one token more)")
    if length == want_length - 1:
        return (f"rows of {length} tokens, expected {want_length}: pad every entry to the longest entry plus one "
                f"token ({longest} + 1 here), so that every entry ends with at least one end-of-text token; after the "
                f"shift, inputs and targets then have as many tokens as the longest entry")
    if length == want_length + 1:
        return ("rows one token too long: inputs drop the last token of the padded entry (padded[:-1]) and targets "
                "the first (padded[1:])")
    if allowed is not None and length > want_length:
        return f"cut inputs and targets to allowed_max_length={allowed} tokens when it is shorter than the rows"
    return f"rows of {length} tokens, expected {want_length}"


def _row_length(shape):
    return shape[1] if isinstance(shape, list) and len(shape) == 2 else None


def _row_hint(key, got_row, wanted_row, entry, pad, ignore, allowed):
    """Why one row differs: the classic mistakes of padding, shifting and masking."""
    if len(got_row) != len(wanted_row):
        return f"the row has {len(got_row)} tokens, expected {len(wanted_row)}"
    if key == "inputs":
        if ignore in got_row and ignore not in wanted_row:
            return (f"the inputs hold ignore_index ({ignore}): only the targets are masked; the inputs keep "
                    f"pad_token_id, a token the embedding can look up")
        if pad != 50256 and 50256 in got_row and 50256 not in wanted_row:
            return f"the row is padded with 50256, but this call gives pad_token_id={pad}: use the argument"
        if got_row[:1] != wanted_row[:1] and wanted_row[:len(entry)] == list(entry)[:len(wanted_row)]:
            return "the inputs start with the entry's first token: pad at the end of the entry, not at its start"
        if pad not in wanted_row or got_row.count(pad) == wanted_row.count(pad):
            return "the inputs are the padded entry without its last token, padded[:-1]"
        return f"the inputs are the entry, then pad_token_id ({pad}) up to the row's length"
    # targets
    if allowed is not None and len(entry) >= len(wanted_row) and got_row[:-1] == wanted_row[:-1] \
            and got_row[-1:] == [pad]:
        return ("the entry was cut to allowed_max_length before padding and shifting, so its last target is an "
                "end-of-text token instead of the entry's next token: pad and shift first, then cut inputs and "
                "targets to allowed_max_length")
    wanted_pads = [i for i, t in enumerate(wanted_row) if t == pad]
    if got_row == [pad if t == ignore else t for t in wanted_row] and ignore in wanted_row:
        return (f"every padding token was kept in the targets: all padding tokens but the first become "
                f"ignore_index ({ignore}), so that the loss skips them")
    if wanted_pads and got_row[wanted_pads[0]] == ignore:
        return (f"the first padding token of the targets must stay {pad}: it is the end-of-text token the model "
                f"must learn to produce after a response; only the padding tokens after it become ignore_index")
    kept = [i for i, (g, w) in enumerate(zip(got_row, wanted_row)) if w == ignore and g == pad]
    if kept and wanted_pads and got_row[wanted_pads[0]] == pad:
        return (f"the padding token at position {kept[0]} was kept: every padding token after the first becomes "
                f"ignore_index ({ignore}), from the one right after the first on")
    if list(got_row[:len(entry)]) == list(entry)[:len(got_row)] and list(entry[1:]) != list(got_row[:len(entry) - 1]):
        return "the targets are the inputs shifted by one token: padded[1:], the token that comes next at each position"
    if ignore != -100 and -100 in got_row:
        return f"the targets use -100, but this call gives ignore_index={ignore}: use the argument"
    if pad != 50256 and 50256 in got_row:
        return f"the row is padded with 50256, but this call gives pad_token_id={pad}: use the argument"
    return "the targets are padded[1:] with every padding token after the first set to ignore_index"


KEY_NAMES = {
    "entry_after": "The entry passed in, after the call",
    "prompt": "The returned prompt",
    "batch_after": "The batch passed in, after the call",
    "dtypes": "The dtypes of inputs and targets",
    "shapes": "The shapes of inputs and targets",
    "inputs": "The inputs",
    "targets": "The targets",
}

ERROR_HINTS = [
    (r"KeyError: '(Instruction|Input|Output|prompt|question|context)'",
     "the entry's keys are lowercase: entry['instruction'], entry['input'] and entry['output']", ("9.1",)),
    (r"KeyError: |IndexError: Replacement index|ValueError: (Single '[{}]' encountered|unexpected '\{')",
     "str.format read braces in the entry's text as fields of the template (an instruction may hold '{' and "
     "'}'): the entry's text went into the template before .format was called. Keep the template your own "
     "text and pass the entry's text as values, .format(instruction=entry['instruction']), or use an f-string "
     "or +", ("9.1",), {"where": r"\.format\("}),
    (r"'(list|tuple)' object has no attribute '(clone|tolist|numel|size)'",
     "each entry of the batch is a list of token ids (what the data set returns): copy it with item.copy() or "
     "list(item), and measure it with len(item)", ("9.2",)),
    (r"expected sequence of length \d+ at dim 1|stack expects each tensor to be equal size",
     "the entries have different lengths: pad each one to the same length (the longest plus one) before making "
     "one tensor of them", ("9.2",)),
    (r"unsupported operand type\(s\) for [+-]: 'NoneType'|'<' not supported between instances of 'int' and 'NoneType'",
     "allowed_max_length may be None, which means no cut: only cut when it is not None", ("9.2",)),
]


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("The instruction data has 1,100 entries, split 935 / 110 / 55 (train, validation, test).",
                   "tests/chapters/test_ch09.py::"
                   "test_the_instruction_data_has_1100_entries_split_935_110_55"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "9.1": TaskSpec(
        contract=Contract(
            pinned=(
                "The Alpaca prompt exactly: the fixed first sentence, a blank line, `### Instruction:` and the "
                "instruction; a blank line, `### Input:` and the input only when the input is not the empty "
                "string; no Response header, no newline at the end.",
                "Fields are used as they are: an input of spaces is not empty, trailing spaces stay, braces in "
                "the text stay; the entry is left unchanged, extra keys included.",
            )),
        probes={"format": _Prompt(format_arguments, outputs=(), also=record_prompt, name="format_input")},
        hints=(_entry_hint,)),
    "9.2": TaskSpec(
        contract=Contract(
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
        probes={"collate": kinds.Function(collate_arguments, outputs=(), also=record_collated, device_pass=True,
                                          name="custom_collate_fn")},
        hints=(_collate_hint,)),
}
