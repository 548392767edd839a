"""`python -m grader apply-policy DIR`: the late policy applied to a graded folder again, without regrading.

    python -m grader apply-policy DIR --policy policy.toml [--submitted-at times.csv] [--file-times]
    python -m grader apply-policy DIR --no-policy

After a change of the policy, an extension granted or a time corrected: the grade files are
written again from the hidden tests' points (grader/outputs/late.py applies the policy,
grader/outputs/report.py writes the files). No student code runs.
"""
import os
import sys

from grader.grading import gradefolder, policy as late_policy
from grader.outputs import late, report


def add_parser(commands):
    p = commands.add_parser("apply-policy", help="apply due dates, extensions, tokens and late penalties to a "
                                                 "graded folder again, without regrading (docs/grading.md)")
    p.add_argument("dir", metavar="DIR", help="the --out folder of a grade run")
    late.add_policy_options(p)
    p.add_argument("--no-policy", action="store_true", help="remove the policy: every task keeps its raw points")


def main(args):
    try:
        if args.no_policy == bool(args.policy):
            raise late_policy.PolicyError("give either --policy FILE or --no-policy")
        setting = late.setting_from(args)
        records = gradefolder.read_grades(args.dir)
        run = gradefolder.read_run(args.dir)
    except (late_policy.PolicyError, gradefolder.GradeFolderError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    before = {(r.get("submission"), r.get("task")): r.get("points") for r in records}
    records = report.write_all(records, args.dir, run, setting=setting, times=late.read_times(args.dir))
    changed = sorted({r["submission"] for r in records if before.get((r["submission"], r["task"])) != r["points"]})
    still_late = sum(1 for d in late.chapter_decisions(records).values() if d["days_late"] or d["after_last"])
    print(f"{'policy applied' if setting else 'policy removed'}: {len(changed)} submissions' points changed"
          f"{' (' + ', '.join(changed) + ')' if changed else ''}; {still_late} late chapter submissions; "
          f"see {os.path.join(args.dir, gradefolder.GRADES_CSV)}")
    return 0
