"""How a grading is launched, configured and followed: the job (job.py), the launchers that run it
(local_run.py, workers.py for --gpus, slurm.py), the class folder, the console and the class's end."""
