"""The ``aicr`` program: configure a GPU cluster from a version-pinned recipe.

Thin: each module is one command group that parses flags, calls one ``shared`` function and hands
the result to ``shared.output``.
"""
