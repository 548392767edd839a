"""What leaves the grader once a run has graded: the gradebook and feedback (report), the class
report (class_report), gradebook files for an LMS (exports), scores sent to an LMS over LTI 1.3 (lms), the pairs
of students whose task cells are alike (similarity), a Gradescope autograder (gradescope), and the late
policy applied to the grades (late; again without regrading: apply_policy), and the class challenge's
entries re-run and ranked (leaderboard), shown in the class report, the feedback and Gradescope
(challenge_report)."""
