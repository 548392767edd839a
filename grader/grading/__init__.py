"""The grading core: submissions in, verdicts out (`python -m grader grade`, `regrade`).

startup (how a run starts: settings, the one preflight, the choice of pool), engine (the
stages of a run), submissions (finding notebooks and task cells), expectations (the
reference's observations on a case, computed here), pool and sandbox (the worker processes student
code runs in), scrub (the grader's secrets kept out of messages), verdict (observations against
expectations), preflight (what the machine must have before a run), gradefolder (the --out
folder: results.jsonl, resuming), regrade (some tasks again), policy (due dates, extensions,
late tokens and penalties: what a policy.toml decides, for both graders).
"""
