"""The ``nvsentinel`` program. Thin: commands parse flags and call the shared library."""
