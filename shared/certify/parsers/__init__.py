"""Parsers of workload output: text in, a pydantic result with a verdict out.

- ``nccl_log``: nccl-tests tables (old and new layouts, MPI prefixes, NCCL noise, crashes);
- ``dcgm_diag``: ``dcgmi diag`` text tables (DCGM 3) and JSON (DCGM 4), per test and per GPU;
- ``training_log``: the ``train-bench`` launcher's log (docs/formats.md): step times, TFLOP/s, goodput.

Pure functions of the text: no I/O, no cluster, no simulator. Each is checked against the real
samples in the team's reference folder and against every log the simulated kubelet emits.
"""
