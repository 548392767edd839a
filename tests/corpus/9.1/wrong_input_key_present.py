# expect: wrong
# mistake: tests whether the key is there ("input" in entry), which every entry has, so an empty input gets a section.
# keywords: add it only when
def format_input(entry):
    parts = ["Below is an instruction that describes a task. Write a response that appropriately completes the request.",
             f"### Instruction:\n{entry['instruction']}"]
    if "input" in entry:
        parts.append(f"### Input:\n{entry['input']}")
    return "\n\n".join(parts)
