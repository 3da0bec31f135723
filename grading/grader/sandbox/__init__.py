"""Where student code runs: bubblewrap, seccomp, a uid and a keyring per run, the GPU nodes it may
see, its CPU share (cgroups), and running one tool as a subprocess under the grader's limits."""
