"""The manual in docs/: it builds strictly with the network out of reach, every page is in
the nav, every link lands, and the built site loads nothing from another host.

The walkthrough's commands run in tests/e2e/test_walkthrough.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIN = os.path.dirname(sys.executable)

# Any fetch the build might try goes to a closed port and fails the build.
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "NO_PROXY": "", "no_proxy": "", "NO_MKDOCS_2_WARNING": "1"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run([os.path.join(BIN, "mkdocs"), "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env={**os.environ, **OFFLINE}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


class _Page(HTMLParser):
    """The ids of a page, its hyperlinks, and the URLs it loads (scripts, styles, images)."""

    LOADS = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
             ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"),
             ("object", "data")}

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.classes: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.add(value)
            elif name == "class":
                self.classes.update(value.split())
            elif tag == "a" and name == "href":
                self.links.append(value)
            if (tag, name) in self.LOADS:
                self.loads.append(value)


def _pages(site: Path) -> dict[Path, _Page]:
    pages = {}
    for path in site.rglob("*.html"):
        page = _Page()
        page.feed(path.read_text())
        pages[path] = page
    return pages


def _nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def _is_remote(url: str) -> bool:
    url = url.strip()
    return urlsplit(url).scheme in ("http", "https", "ftp") or url.startswith("//")


def test_mkdocs_builds_the_manual_strictly_offline(site):
    assert (site / "index.html").is_file() and (site / "getting-started.html").is_file()


def test_every_page_is_in_the_nav_once():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = _nav_pages(config["nav"])
    present = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(listed) == present


def test_every_internal_link_and_anchor_lands(site):
    pages = _pages(site)
    broken = []
    for path, page in pages.items():
        for href in page.links:
            if urlsplit(href).scheme or href.startswith("//"):
                continue  # another site, mailto: ...
            parts = urlsplit(href)
            # 404.html links from the site's root, the other pages relatively.
            base = site if parts.path.startswith("/") else path.parent
            target = (base / unquote(parts.path).lstrip("/")).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: {href}")
            elif parts.fragment and target.suffix == ".html" and (
                    parts.fragment not in pages[target].ids):
                broken.append(f"{path.relative_to(site)}: {href} (no such anchor)")
    assert not broken, broken


def test_the_site_loads_nothing_from_another_host(site):
    pages = _pages(site)
    remote = [f"{path.relative_to(site)}: {url}" for path, page in pages.items()
              for url in page.loads if _is_remote(url)]
    assert not remote, remote
    for css in site.rglob("*.css"):
        text = css.read_text()
        urls = re.findall(r"url\(\s*['\"]?([^'\")]+)", text)
        urls += re.findall(r"@import\s+['\"]([^'\"]+)", text)
        assert not [url for url in urls if _is_remote(url)], css
    # The theme's script fetches mermaid from a CDN only for a page with a diagram.
    assert not [path for path, page in pages.items() if "mermaid" in page.classes]
    assert not [path for path in pages if "fonts.googleapis.com" in path.read_text()]


def test_the_readme_is_a_front_page_whose_links_land():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 300
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not _is_remote(t) and not (ROOT / t).exists()]
    assert not missing, missing
