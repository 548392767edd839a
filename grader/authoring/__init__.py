"""The author's tools: the release, the hidden reference and the fixtures built from the masters
(build), the workshop edition (workshop), and `python -m grader where TASK` (contract)."""
