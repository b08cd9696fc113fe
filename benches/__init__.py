"""Benchmarks, run with ``make bench``; each writes its figures into docs/benchmarks.md."""
