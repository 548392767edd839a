# expect: correct
# mistake: none (one str.format template with positional fields; the optional section is formatted first and passed in as a value)
def format_input(entry):
    template = ("Below is an instruction that describes a task. "
                "Write a response that appropriately completes the request.\n\n"
                "### Instruction:\n{}{}")
    input_section = "\n\n### Input:\n{}".format(entry["input"]) if len(entry["input"]) > 0 else ""
    return template.format(entry["instruction"], input_section)
