"""The one way to a Kubernetes cluster: the official ``kubernetes`` client, built and wrapped here.

Base layer, beside ``errors`` and ``yamlio``: the only package that imports ``kubernetes``
(import-time cost 200-700 ms, so callers import these modules inside the commands that need
them, never at the top of a CLI module). It produces configured ``ApiClient`` objects
(``client``), turns API failures into the project's error classes (``errors``) and retries
what is worth retrying (``retry``). It never logs a credential.
"""
