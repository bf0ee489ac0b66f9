"""What every HTML page of the CLI shares: one self-contained document (inline CSS and JS, no external
assets) rendered from the Jinja2 templates in templates/ (package data), with autoescaping on.

Every piece of text that came from a person or a model is escaped by the templates; only the
page's own stylesheet and script, and the reporter's markdown as markdown_html renders it, pass as
Markup. As a second line of defence the page's Content-Security-Policy only lets the page's own
script run (by its hash), so a script smuggled into the content stays text even if an escape
were missed.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

import factcheck_cli.view as view
from factcheck.v1 import factcheck_pb2

_TEMPLATES = resources.files("factcheck_cli") / "templates"
STYLE = Markup((_TEMPLATES / "page.css").read_text(encoding="utf-8"))
SCRIPT = (_TEMPLATES / "page.js").read_text(encoding="utf-8")
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'"

templates = Environment(
    loader=PackageLoader("factcheck_cli", "templates"),
    autoescape=select_autoescape(["html.j2"], default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def frame(template: str, **context) -> str:
    """A whole page from one of the templates (which extend page.html.j2); the context has its `title`
    (header_context gives it with the header's other values)."""
    context.setdefault("extra_style", Markup(""))
    return templates.get_template(template).render(
        policy=CONTENT_SECURITY_POLICY,
        style=STYLE,
        script=Markup(SCRIPT),
        **context,
    )


def header_context(result: factcheck_pb2.FactCheckResult, title: str) -> dict:
    """What the page header shows: title, question, status, and why a run is incomplete or failed."""
    message, causes = view.explanation(result)
    return {
        "title": title,
        "question": result.question,
        "status": view.status_name(result.status),
        "created": view.local_time(result.created_at),
        "message_id": result.message_id,
        "note": view.status_note(result),
        "message": message,
        "causes": causes,
    }
