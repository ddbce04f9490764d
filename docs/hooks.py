"""Build hooks of the reference site (mkdocs.yml ``hooks``).

- The guide pages link to files of the repository outside ``docs/`` (result tables and
  figures, the README, the benchmarks' notes). Each such file, and each file that a linked
  page links to in turn, is put into the site under ``repo/`` and the links are rewritten to
  point there, so that every figure shows and every link works in the built site.
- ``cli.md``, the command line's page, is made from the argument parser itself (every
  command's ``--help``), so that it cannot drift from the commands.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
#: Where the site keeps the repository's files that the pages link to.
PREFIX = "repo"
#: A Markdown link or image target, or an HTML src/href, up to an anchor.
_LINK = re.compile(r"(\]\(|(?:src|href)=\")(?!https?:|mailto:|#)([^)\"#\s]+)")


def _targets(text: str, where: str) -> list[str]:
    """The repository paths (relative to the root) that the links of a file at ``where`` name."""
    out = []
    for _, url in _LINK.findall(text):
        path = posixpath.normpath(posixpath.join(posixpath.dirname(where), url))
        if not path.startswith("..") and (ROOT / path).is_file():
            out.append(path)
    return out


def _site_path(repo_path: str) -> str:
    """Where a repository file lies in the site's sources: a guide page where it is, the rest
    under :data:`PREFIX`."""
    return repo_path[len("docs/"):] if repo_path.startswith("docs/") else f"{PREFIX}/{repo_path}"


def on_files(files, config):
    seen: set[str] = set()
    todo = [f"docs/{f.src_uri}" for f in files if f.src_uri.endswith(".md")]
    while todo:
        where = todo.pop()
        if where in seen:
            continue
        seen.add(where)
        text = (ROOT / where).read_text(encoding="utf-8", errors="replace")
        for path in _targets(text, where):
            if path.startswith("docs/") or path in seen:
                continue
            if path.endswith(".md"):
                todo.append(path)
            else:
                seen.add(path)
            site = File(_site_path(path), str(ROOT), config["site_dir"], config["use_directory_urls"])
            site.abs_src_path = str(ROOT / path)
            files.append(site)
    files.append(File.generated(config, "cli.md", content=cli_page()))
    return files


def on_page_markdown(markdown, page, config, files):
    """Point each link to a repository file at its copy in the site."""
    src = page.file.src_uri
    where = src[len(PREFIX) + 1:] if src.startswith(f"{PREFIX}/") else f"docs/{src}"

    def rewrite(m: re.Match) -> str:
        lead, url = m.group(1), m.group(2)
        path = posixpath.normpath(posixpath.join(posixpath.dirname(where), url))
        if path.startswith("..") or not (ROOT / path).is_file():
            return m.group(0)
        return lead + posixpath.relpath(_site_path(path), posixpath.dirname(src) or ".")

    return _LINK.sub(rewrite, markdown)


def cli_page() -> str:
    """The command line's page: every command's ``--help``, as the parser prints it."""
    import argparse

    from nnsweeper.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: the same page everywhere
    try:
        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parts = ["# The command line", "",
                 "Every command of `nnsweeper`, as its `--help` prints it (this page is made from the "
                 "command line's own parser when the site is built).", "",
                 "```text", parser.format_help().rstrip(), "```", ""]
        for name, command in sub.choices.items():
            parts += [f"## nnsweeper {name}", "", "```text", command.format_help().rstrip(), "```", ""]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)
