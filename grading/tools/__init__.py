"""The grading tools beside grade.py: the A/A timing check, the throughput benchmark and its summary
(instructors), and the students' profiling and coarsening tools. Each is a script: python3 grading/tools/NAME.py."""
