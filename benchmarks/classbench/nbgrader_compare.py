"""The nbgrader part of benchmarks/class_bench.py: the first --nbgrader-slice students without a
broken notebook, graded by `nbgrader autograde` and by the course grader alone; the ratio of their
times per student, and whether every task's points agree."""
import os
import time

from classbench.build_class import TASKS_PER_STUDENT
from classbench.watch import grade, print_run
from gptcourse.checking.tasks import CHAPTERS
from grader.nbgrading import course as nbgrader_course


def nbgrader_part(args, work, plan, whole):
    """The first --nbgrader-slice students without a broken notebook, under both graders."""
    students = [s for s in sorted(plan) if not plan[s]["broken"]][: args.nbgrader_slice]
    slice_dir = os.path.join(work, "nbgrader_course")
    start = time.perf_counter()
    nbgrader_course.make_course(slice_dir)
    setup_s = time.perf_counter() - start
    for student in students:
        for chapter in CHAPTERS:
            nbgrader_course.add_submission(slice_dir, student, chapter,
                                           os.path.join(work, "class", student, f"{chapter}.ipynb"))
    mini = grade(slice_dir, os.path.join(work, "out_slice"), args, len(students) * TASKS_PER_STUDENT)
    print_run("\ncourse grader, the nbgrader slice alone", mini, len(students))
    chapter_s = {}
    for chapter in CHAPTERS:  # as grade_bench.nbgrader_autograde does, timing each chapter
        start = time.perf_counter()
        nbgrader_course.autograde(slice_dir, chapter, seed=args.seed, device=args.device)
        chapter_s[chapter] = time.perf_counter() - start
    seconds, scores = sum(chapter_s.values()), nbgrader_course.scores(slice_dir)
    per_student = seconds / len(students)
    whole_per_student = whole["wall_s"] / args.students
    print(f"\nnbgrader autograde, {len(students)} students x {len(CHAPTERS)} chapters: {seconds:.1f} s "
          f"({per_student:.1f} s per student; not counted: generate_assignment of every chapter {setup_s:.1f} s)")
    print("   per chapter and student: "
          + ", ".join(f"{c[:2]} {s / len(students):.0f} s" for c, s in chapter_s.items()))
    ratio_whole = per_student / whole_per_student
    ratio_slice = per_student / (mini["wall_s"] / len(students))
    print(f"ratio of the time per student, nbgrader / course grader: {ratio_whole:.1f}x against the whole "
          f"class's run, {ratio_slice:.1f}x against the course grader on the same {len(students)} students "
          f"(the target: at least 20x)")
    course_points = {(r["submission"], r["task"]): r["points"] for r in mini["records"]}
    differ = sorted(f"{s} {t}: nbgrader {score:g}, course grader {course_points.get((s, t))}"
                    for (s, t), (score, _) in scores.items() if score != course_points.get((s, t)))
    print(f"points: course grader {sum(course_points.values())}, nbgrader {sum(s for s, _ in scores.values()):g}; "
          f"every task agrees: {'yes' if not differ else 'NO'}")
    for line in differ[:20]:
        print(f"  differs: {line}")
    return {"students": len(students), "seconds": seconds, "per_student_s": per_student, "setup_s": setup_s,
            "course_grader_slice_s": mini["wall_s"], "chapter_s": chapter_s, "ratio_vs_whole_class": ratio_whole,
            "ratio_vs_same_slice": ratio_slice, "differ": differ}
