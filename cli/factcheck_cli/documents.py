"""Reading .txt, .md and .html files as knowledge-store documents."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from factcheck.v1 import common_pb2

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def cannot_read(name: object, error: OSError) -> str:
    """What the commands say about a file they cannot read: "cannot read notes.md: No such file or directory"."""
    return f"cannot read {name}: {error.strerror or error}"


def read_bytes(path: Path) -> bytes:
    """The file's bytes; ValueError saying `cannot_read` when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise ValueError(cannot_read(path, error)) from error


NOT_A_DOCUMENT = "not a .txt, .md or .html file"


@dataclass(frozen=True)
class FoundFiles:
    """What `find_documents` found: the supported files, each with the path it was found under (the
    folder, or the file itself), and the other files in the folders, each with why it is left out."""

    documents: list[tuple[Path, Path]]
    skipped: list[tuple[Path, str]]


def find_documents(paths: Iterable[Path]) -> FoundFiles:
    """The files among `paths`, folders searched recursively, in a stable order. ValueError for a path
    that does not exist or cannot be read, and for a file named that is of another kind."""
    found = FoundFiles([], [])
    for path in paths:
        try:
            path.stat()
        except OSError as error:
            raise ValueError(cannot_read(path, error)) from error
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                if file.suffix.lower() in SUFFIXES:
                    found.documents.append((file, path))
                else:
                    found.skipped.append((file, NOT_A_DOCUMENT))
        elif path.suffix.lower() in SUFFIXES:
            found.documents.append((path, path))
        else:
            raise ValueError(f"{path}: {NOT_A_DOCUMENT}")
    return found


def document_files(paths: Iterable[Path]) -> Iterator[tuple[Path, Path]]:
    """The supported files among `paths` (`find_documents`), each with the path it was found under."""
    yield from find_documents(paths).documents


class NotText(ValueError):
    """A file (or stdin) that holds no text to check: binary data, or nothing but whitespace; `reason`
    says which without naming the file ("empty")."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def decode_text(data: bytes, name: str) -> str:
    """The text of a file's bytes (UTF-8, undecodable bytes replaced); NotText for binary or empty data.

    A NUL byte is what marks binary data (images, PDFs, executables); text never contains one,
    and the gateway refuses it anyway.
    """
    if b"\0" in data:
        raise NotText(f"{name} is a binary file, not text", "a binary file, not text")
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise NotText(f"{name} is empty", "empty")
    return text


def document_id(path: Path, found_under: Path) -> str:
    """A document's id: its path from the folder it was found under, that folder's name first
    ("knowledge/apollo-11.html"), or a file's name when the file was named itself. It does not depend
    on where the folder is, so the same folder loaded from two places is the same documents, and
    re-adding an edited file replaces it."""
    if path == found_under:
        return path.name
    return f"{found_under.resolve().name}/{path.relative_to(found_under).as_posix()}"


def read_document(path: Path, found_under: Path | None = None) -> common_pb2.Source:
    """A Source with the file's `document_id` (found_under: the folder named, or the file itself) and
    no URL: a link to this machine's copy would be wrong for every other checkout, machine or reader
    of the shared store.

    Raises NotText for a binary or empty file, ValueError if it cannot be read.
    """
    raw = decode_text(read_bytes(path), str(path))
    if path.suffix.lower() in (".html", ".htm"):
        title, text = html_text(raw)
    else:
        text = raw
        heading = _MARKDOWN_HEADING.search(raw) if path.suffix.lower() != ".txt" else None
        title = heading.group(1) if heading else None
    return common_pb2.Source(id=document_id(path, found_under or path), title=title or path.stem, text=text)


class _TextExtractor(HTMLParser):
    """Visible text of a page: no script or style, block elements on their own lines, headings written
    as Markdown headings (`## Section`), which the knowledge store keeps out of its passages."""

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "table"}
    HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
    HIDDEN = {"script", "style", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._hidden = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in self.HIDDEN:
            self._hidden += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self.BLOCKS:
            self.parts.append("\n\n" + ("#" * int(tag[1]) + " " if tag in self.HEADINGS else ""))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag == "title":
            self._in_title = False
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            self.parts.append(data)


def html_text(html: str) -> tuple[str | None, str]:
    """(title, text) of an HTML page; paragraphs separated by blank lines, headings as Markdown headings."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    paragraphs = [" ".join(p.split()) for p in "".join(parser.parts).split("\n\n")]
    title = " ".join("".join(parser.title).split()) or None
    return title, "\n\n".join(p for p in paragraphs if p)
