"""The screenshots in the getting-started guides, behind ``make screenshots``.

Each guide in docs/getting-started/ is run as written (tests/guides.py: its ``$`` commands in
order, in one bash, in a directory of its own, against the simulated cluster it starts), so the
HTML reports are exactly the ones a reader gets. Then headless Chromium (Debian's, driven by
Playwright as in tests/reports/) opens each report, waits for its charts to be drawn, and the
top of the page (1200 px wide, at most 1500 px high) is written to docs/getting-started/img/ as
a PNG of at most 256 colours (well under 400 KB).

Every process a guide starts is stopped when the guide ends, also when a command fails, on a
timeout or on Ctrl-C (tests.guides.run); the browser is closed the same way. Exit 0 when every
picture was written; 1, with the commands that did not run as the guide shows, otherwise.

    python docs/screenshots.py                      # all of them
    python docs/screenshots.py sre-on-call          # the pictures of one guide
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import browser, guides  # noqa: E402  (the repository root is on the path only now)

IMG = guides.GUIDES / "img"
WIDTH = 1200
MAX_HEIGHT = 1500


def shoot(pages: list[tuple[Path, Path]]) -> None:
    """Open each page headless, wait for its charts, write the top of it as a small PNG."""
    chromium = browser.executable()
    if chromium is None:
        raise SystemExit("no chromium: `make setup` installs Debian's chromium (as root)")
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, args=list(browser.ARGS), headless=True)
        try:
            tab = instance.new_page(viewport={"width": WIDTH, "height": 900})
            for page, png in pages:
                tab.goto(page.as_uri(), wait_until="load")
                charts = tab.locator(".chart").count()
                if charts:
                    tab.wait_for_function(
                        "n => document.querySelectorAll('.chart .main-svg').length >= n", arg=charts, timeout=120_000
                    )
                height = min(MAX_HEIGHT, int(tab.evaluate("document.documentElement.scrollHeight")))
                shot = tab.screenshot(clip={"x": 0, "y": 0, "width": WIDTH, "height": height}, full_page=True)
                picture = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=256)
                png.parent.mkdir(parents=True, exist_ok=True)
                picture.save(png, optimize=True)
                print(f"{png.relative_to(ROOT)}: {png.stat().st_size // 1024} KB", flush=True)
        finally:
            instance.close()


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(guides.PICTURES))
    if unknown:
        print(f"unknown guide {', '.join(unknown)}: one of {', '.join(guides.PICTURES)}", file=sys.stderr)
        return 2
    env = guides.environment(os.environ, Path(sys.executable).parent)
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp:
        pages: list[tuple[Path, Path]] = []
        for name in names or list(guides.PICTURES):
            workdir = Path(tmp) / name
            workdir.mkdir()
            print(f"running docs/getting-started/{name}.md", flush=True)
            problems = guides.failures(guides.run(guides.GUIDES / f"{name}.md", workdir, env))
            if problems:
                print(f"docs/getting-started/{name}.md does not run as written:", file=sys.stderr)
                print("\n\n".join(problems), file=sys.stderr)
                return 1
            pages += [(workdir / html, IMG / png) for html, png in guides.PICTURES[name]]
        shoot(pages)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
