"""The ``nvcrectl`` program. Thin: commands parse flags and call the shared library."""
