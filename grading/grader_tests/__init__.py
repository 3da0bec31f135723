"""Unit tests of the grader (CPU only, standard library): python3 -m unittest discover -s grading/grader_tests -t grading"""
