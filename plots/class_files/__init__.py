"""The names and formats of a class's files, defined once for the grader that writes them and the
plots that read them: a student's file name (names.py), the formula-safe CSV cell (csv_cells.py) and
timings.csv's columns (timings_columns.py). Standard library only, and nothing of the plots: the
plots run on their own (a student's benchmark CSV, no grader), and the grader imports this package
as grading/class_files, a link to this folder, so neither puts the other on its path.
"""
