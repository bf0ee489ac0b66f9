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
