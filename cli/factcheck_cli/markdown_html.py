"""The reporter's markdown as safe HTML (markdown-it-py, CommonMark plus tables), for the HTML report.

Model text is untrusted: raw HTML in it is escaped (html=False); images are off (they would
load from outside the page) and so are links and autolinks (a model must not plant a link in
a report; their text stays, as text). The only links are the citations of a passage of the run
("[P2]"): each points to that passage in the page's source list.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup, escape

CITATION = re.compile(r"\[(P\d+)\]")


def source_anchor(passage_id: str) -> str:
    return f"source-{passage_id}"


def _link_citations(state: StateCore) -> None:
    """Split text tokens at "[P2]" and wrap each known passage id in a link to its source entry."""
    known: Collection[str] = state.env.get("passage_ids", ())
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        inside_link = 0
        for child in block.children:
            inside_link += {"link_open": 1, "link_close": -1}.get(child.type, 0)
            if child.type != "text" or inside_link or not CITATION.search(child.content):
                children.append(child)
                continue
            position = 0
            for match in CITATION.finditer(child.content):
                if match.group(1) not in known:
                    continue
                if match.start() > position:
                    children.append(_text(child.content[position : match.start()]))
                opening = Token("link_open", "a", 1)
                opening.attrs = {"href": f"#{source_anchor(match.group(1))}", "class": "cite"}
                children += [opening, _text(match.group(0)), Token("link_close", "a", -1)]
                position = match.end()
            if position < len(child.content):
                children.append(_text(child.content[position:]))
        block.children = children


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


_markdown = (
    MarkdownIt("commonmark", {"html": False})
    .enable(["table", "strikethrough"])
    .disable(["image", "link", "autolink", "reference"])
)
_markdown.core.ruler.push("link_citations", _link_citations)
# A table wider than the page scrolls inside its own box, so no cell is squeezed into breaking its words.
_markdown.add_render_rule("table_open", lambda *_: '<div class="table-scroll"><table>\n')
_markdown.add_render_rule("table_close", lambda *_: "</table></div>\n")


def without_sections(text: str, headings: Collection[str]) -> tuple[str, list[str]]:
    """The markdown without the sections under the given headings (each to the next heading of its level or
    higher; compared without case, a trailing "(3)" or ":"), and the headings it left out, as written."""
    wanted = {_heading_key(heading) for heading in headings}
    lines = text.splitlines(keepends=True)
    tokens = _markdown.parse(text)
    dropped: list[tuple[int, int]] = []
    left_out: list[str] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        title = tokens[index + 1].content
        if _heading_key(title) not in wanted:
            continue
        level = int(token.tag[1])
        end = next(
            (
                later.map[0]
                for later in tokens[index + 1 :]
                if later.type == "heading_open" and later.map is not None and int(later.tag[1]) <= level
            ),
            len(lines),
        )
        dropped.append((token.map[0], end))
        left_out.append(title)
    kept = [line for number, line in enumerate(lines) if not any(start <= number < end for start, end in dropped)]
    return "".join(kept), left_out


def _heading_key(heading: str) -> str:
    return re.sub(r"\s*(\(\d+\))?\s*:?\s*$", "", " ".join(heading.casefold().split()))


def markdown_to_html(text: str, passage_ids: Collection[str] = ()) -> Markup:
    """The markdown rendered as HTML that can run nothing and load nothing."""
    return Markup(_markdown.render(text, {"passage_ids": set(passage_ids)}))


def cite_text(text: str, passage_ids: Collection[str]) -> Markup:
    """Plain text (a checker's evidence) escaped, with its known "[P2]" citations linked to the sources."""
    parts, position = [], 0
    for match in CITATION.finditer(text):
        if match.group(1) not in passage_ids:
            continue
        parts.append(escape(text[position : match.start()]))
        anchor = source_anchor(match.group(1))
        parts.append(Markup('<a class="cite" href="#{}">{}</a>').format(anchor, match.group(0)))
        position = match.end()
    parts.append(escape(text[position:]))
    return Markup("").join(parts)
