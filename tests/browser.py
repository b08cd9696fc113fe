"""The real browser the HTML report tests open pages in: Debian's ``chromium``, never a browser download.

``make setup`` runs ``python -m tests.browser install``: when no chromium is on the machine and we
run as root (CI, the developers' machines), ``apt-get install chromium`` from Debian's archive (a
package registry every machine of ours reaches); otherwise nothing. Playwright drives it through
``executable_path``, headless and with ``--no-sandbox`` (root in a container has no user namespace
for the sandbox). Standard library only: it runs before the tests import anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CANDIDATES = ("chromium", "chromium-browser")
ARGS = ("--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")


def executable() -> str | None:
    """The chromium on PATH (Debian installs /usr/bin/chromium), or None."""
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def install() -> int:
    if executable() is not None:
        return 0
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        print("chromium: not installed and not root with apt-get: the HTML report tests will say so", file=sys.stderr)
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], stdout=subprocess.DEVNULL, env=env, check=False)
    done = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
        stdout=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    if done.returncode != 0 or executable() is None:
        print("chromium: apt-get install chromium failed", file=sys.stderr)
        return 1
    print(f"installed {executable()} (Debian's chromium)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        print("usage: python -m tests.browser install", file=sys.stderr)
        sys.exit(2)
    sys.exit(install())
