"""Where the programs keep what they can recompute: the one user cache directory.

Base module (standard library only, so the recipe memo's fast path can use it). Everything cached
is keyed by content (parsed catalogs, parsed recipes, compiled templates, memoised recipe output),
so the folder can be deleted at any time; the only cost is one slower run.

The folder is ``$XDG_CACHE_HOME/aicr``, or ``~/.cache/aicr`` when the variable is unset or empty
(the XDG Base Directory specification's default). Nothing here creates it: each cache creates its
own subfolder when it first writes, and treats a folder it cannot write as a miss.
"""

from __future__ import annotations

import os
from pathlib import Path

XDG_CACHE_HOME = "XDG_CACHE_HOME"
"""The environment variable naming the user's cache root."""
APP_FOLDER = "aicr"
"""The folder of the cache root this project owns (the recipe and bundle caches began with aicr)."""


def user_cache(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/aicr/PARTS…`` (``~/.cache`` for an unset or empty variable); not created."""
    root = os.environ.get(XDG_CACHE_HOME) or str(Path.home() / ".cache")
    return Path(root, APP_FOLDER, *parts)
