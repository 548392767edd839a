"""What leaves the grader once a run has graded: the gradebook and feedback (report), the class
report (class_report), gradebook files for an LMS (exports), scores sent to an LMS over LTI 1.3 (lms) and a Gradescope
autograder (gradescope)."""
