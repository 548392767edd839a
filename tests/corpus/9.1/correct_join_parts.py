# expect: correct
# mistake: none (a list of sections, each header and text joined by "\n", the sections by "\n\n"; the test is entry["input"] != "")
def format_input(entry):
    sections = [
        "Below is an instruction that describes a task. Write a response that appropriately completes the request.",
        "### Instruction:\n" + entry["instruction"],
    ]
    if entry["input"] != "":
        sections.append("### Input:\n" + entry["input"])
    return "\n\n".join(sections)
