"""`factcheck kb add|list|search|delete`: manage the knowledge store through the gateway's KnowledgeService.

`kb add` never overwrites a stored document without being asked: a file whose id (its name, or its path
from the folder named) the store holds with other text is refused (the gateway's ALREADY_EXISTS) unless
`--replace` is given; `--id` adds a single file under an id of the caller's choosing. Each file's fate is
printed: added, replaced, already stored, refused or skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

import factcheck_cli.render as render
import factcheck_cli.view as view
from factcheck.kit.errors import error_info_of
from factcheck.text.evidence_text import passage_title
from factcheck.v1 import common_pb2, knowledge_pb2, knowledge_pb2_grpc
from factcheck_cli.arguments import TOP_K, bounded, int_between
from factcheck_cli.client import (
    EXIT_OK,
    EXIT_USAGE,
    UNARY_TIMEOUT_S,
    add_page_options,
    channel_command,
    next_page_command,
)
from factcheck_cli.documents import NotText, find_documents, read_document
from factcheck_cli.tables import Column, add_wide_option, print_table
from factcheck_cli.terminal import counted

# One AddDocuments call stays well inside the gateway's limits (100 documents, 2 MB of text).
BATCH_DOCUMENTS, BATCH_BYTES = 50, 1_500_000
# Skipped files are named one per line up to this many; the rest are counted.
MAX_SKIPPED_LINES = 20
REFUSED_HINT = "--replace overwrites it, --id ID adds a single file under another id"

ADDED, REPLACED, ALREADY_STORED, REFUSED = "added", "replaced", "already stored", "refused"


def add_parser(commands) -> None:
    parser = commands.add_parser("kb", help="manage the knowledge store the checkers verify against")
    actions = parser.add_subparsers(dest="kb_command", required=True, metavar="ACTION")

    add = actions.add_parser(
        "add",
        help="add .txt, .md and .html files (folders are searched recursively)",
        description=(
            "Add documents, each named by its file name, or by its path from the folder named ('notes/a.md'). "
            "A document whose id is stored with other text is refused unless --replace is given; --id names a "
            "single file's document. Each file's fate is printed: added, replaced, already stored (its text is "
            "stored, under the id shown), refused, or skipped (an empty or binary file, or a file in a folder "
            "that is not .txt, .md or .html, each named on stderr with why)."
        ),
        epilog="exit codes: 0 added (or already stored), 2 a path that cannot be read, no file with text, "
        "an --id with more than one file, or a document refused, 3 the gateway is unreachable",
    )
    add.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a .txt, .md or .html file, or a folder")
    add.add_argument(
        "--replace",
        action="store_true",
        help="replace stored documents that have the same id and other text (an edited file added again)",
    )
    add.add_argument("--id", dest="document_id", metavar="ID", help="the document's id, for a single file")
    add.add_argument("--json", action="store_true", help="print what became of each file as one JSON object")
    add.set_defaults(run=channel_command(run_add))

    listing = actions.add_parser(
        "list",
        help="list stored documents, newest first",
        description="List stored documents, newest first: one line each, cut to fit; --wide shows every id whole "
        "(what `kb delete` takes) and more columns.",
    )
    add_page_options(listing, "documents")
    add_wide_option(listing)
    listing.add_argument("--json", action="store_true", help="print the page as one JSON object")
    listing.set_defaults(run=channel_command(run_list))

    search = actions.add_parser("search", help="full-text search over the stored passages")
    search.add_argument("query", help="the words to look for (any of them matches)")
    search.add_argument(
        "--top-k",
        type=int_between(TOP_K),
        default=5,
        metavar="N",
        help=f"how many passages to show, {bounded(TOP_K)} (default 5)",
    )
    search.add_argument("--json", action="store_true", help="print the passages found as one JSON object")
    search.set_defaults(run=channel_command(run_search))

    delete = actions.add_parser(
        "delete",
        help="remove a document",
        epilog="exit codes: 0 deleted, 3 the gateway is unreachable, 5 no document with that id",
    )
    delete.add_argument("document_id", help="the document's id, as `kb list --wide` and `kb add` print it")
    delete.set_defaults(run=channel_command(run_delete))


def _stub(channel) -> knowledge_pb2_grpc.KnowledgeServiceStub:
    return knowledge_pb2_grpc.KnowledgeServiceStub(channel)


# --- kb add -------------------------------------------------------------------------------------------


@dataclass
class FileOutcome:
    """What became of one file: its document, the state (ADDED, ...), the stored document's id and passages."""

    path: Path
    document: common_pb2.Source
    state: str = ""
    document_id: str = ""
    passage_count: int = 0


@dataclass
class AddReport:
    files: list[FileOutcome]
    skipped: list[tuple[Path, str]]

    def count(self, state: str) -> int:
        return sum(outcome.state == state for outcome in self.files)

    def summary(self) -> str:
        """ "2 added (5 passages), 1 already stored, 1 skipped"; "0 added, 1 replaced (2 passages), …"."""
        passages = sum(o.passage_count for o in self.files if o.state in (ADDED, REPLACED))
        stored = f"{self.count(ADDED)} added" + (f", {self.count(REPLACED)} replaced" if self.count(REPLACED) else "")
        parts = [f"{stored} ({counted(passages, 'passage')})", f"{self.count(ALREADY_STORED)} already stored"]
        parts += [f"{self.count(REFUSED)} refused"] if self.count(REFUSED) else []
        parts += [f"{len(self.skipped)} skipped"] if self.skipped else []
        return ", ".join(parts)

    def as_json(self) -> str:
        return json.dumps(
            {
                "documents": [
                    {
                        "path": str(o.path),
                        "documentId": o.document_id or o.document.id,
                        "title": o.document.title,
                        "state": o.state.replace(" ", "_"),
                        "passageCount": o.passage_count,
                    }
                    for o in self.files
                ],
                "skipped": [{"path": str(path), "reason": reason} for path, reason in self.skipped],
            },
            ensure_ascii=False,
        )


def _batches(outcomes: list[FileOutcome]) -> list[list[FileOutcome]]:
    batches: list[list[FileOutcome]] = []
    current: list[FileOutcome] = []
    size = 0
    for outcome in outcomes:
        length = len(outcome.document.text.encode("utf-8"))
        if current and (len(current) == BATCH_DOCUMENTS or size + length > BATCH_BYTES):
            batches.append(current)
            current, size = [], 0
        current.append(outcome)
        size += length
    return batches + ([current] if current else [])


def read_files(paths: list[Path], document_id: str | None = None) -> AddReport:
    """The documents under `paths`, and the files left out with why. ValueError for a path that cannot be
    read, and for an --id with more than one file."""
    if document_id is not None and (len(paths) != 1 or paths[0].is_dir()):
        raise ValueError("--id names one document: give exactly one file, not a folder")
    found = find_documents(paths)
    report = AddReport([], list(found.skipped))
    for path, found_under in found.documents:
        try:
            document = read_document(path, found_under)
        except NotText as skipped:
            # One empty or binary file must not keep a folder's other documents out.
            report.skipped.append((path, skipped.reason))
            continue
        if document_id is not None:
            document.id = document_id
        report.files.append(FileOutcome(path, document))
    report.skipped.sort(key=lambda skipped: skipped[0])
    return report


def add_files(
    channel, report: AddReport, *, replace: bool = False, on_batch: Callable[[list[FileOutcome]], None] | None = None
) -> None:
    """Send the report's documents, a batch at a time; each file's state and stored document are filled in,
    and `on_batch` is told each batch once its files' fates are known. A document the gateway refuses (its id
    stored with other text) is REFUSED, and the rest of its batch is sent again."""
    for batch in _batches(report.files):
        pending = batch
        while pending:
            request = knowledge_pb2.AddDocumentsRequest(documents=[o.document for o in pending], replace=replace)
            try:
                response = _stub(channel).AddDocuments(request, timeout=120)
            except grpc.RpcError as error:
                refused = _refused_indexes(error, len(pending))
                if not refused:
                    raise
                for index in refused:
                    pending[index].state = REFUSED
                pending = [outcome for index, outcome in enumerate(pending) if index not in refused]
                continue
            for outcome, added in zip(pending, response.documents):
                outcome.document_id, outcome.passage_count = added.document_id, added.passage_count
                outcome.state = REPLACED if added.replaced else ADDED if added.created else ALREADY_STORED
            pending = []
        if on_batch is not None:
            on_batch(batch)


def _refused_indexes(error: grpc.RpcError, sent: int) -> set[int]:
    """The documents an ALREADY_EXISTS names (ErrorInfo.metadata.document_indexes); empty for any other error."""
    if error.code() != grpc.StatusCode.ALREADY_EXISTS or (info := error_info_of(error)) is None:
        return set()
    indexes = info.metadata.get("document_indexes", "").split(",")
    return {int(index) for index in indexes if index.isdigit() and int(index) < sent}


def print_skipped(report: AddReport) -> None:
    """The files left out, with why, on stderr: the first MAX_SKIPPED_LINES of them, then how many more."""
    for path, reason in report.skipped[:MAX_SKIPPED_LINES]:
        print(f"{'skipped':>14}  {path}: {reason}", file=sys.stderr)
    if len(report.skipped) > MAX_SKIPPED_LINES:
        print(f"{'':>14}  … and {len(report.skipped) - MAX_SKIPPED_LINES} more skipped", file=sys.stderr)


def print_files(outcomes: list[FileOutcome]) -> None:
    """A line per file: its fate, the stored document's id, its passages and title."""
    for outcome in outcomes:
        if outcome.state == REFUSED:
            detail = "a document with this id holds other text"
            print(f"{REFUSED:>14}  {outcome.document.id}  ({detail})  {outcome.document.title}", flush=True)
        else:
            passages = counted(outcome.passage_count, "passage")
            print(f"{outcome.state:>14}  {outcome.document_id}  ({passages})  {outcome.document.title}", flush=True)


def add_paths(
    channel, paths: list[Path], *, replace: bool = False, document_id: str | None = None, as_json: bool = False
) -> AddReport:
    """Add the documents under `paths`, printing what became of each file as its batch is stored, then the
    counts (`as_json`: all of it as one JSON object at the end). ValueError: see `read_files`, and no file
    with text."""
    report = read_files(paths, document_id)
    if not as_json:
        print_skipped(report)
    if not report.files:
        raise ValueError("no .txt, .md or .html files with text found")
    add_files(channel, report, replace=replace, on_batch=None if as_json else print_files)
    print(report.as_json() if as_json else report.summary())
    return report


def run_add(args: argparse.Namespace, channel) -> int:
    try:
        report = add_paths(channel, args.paths, replace=args.replace, document_id=args.document_id, as_json=args.json)
    except ValueError as error:
        print(f"factcheck kb add: {error}", file=sys.stderr)
        return EXIT_USAGE
    if refused := report.count(REFUSED):
        print(
            f"factcheck kb add: {counted(refused, 'document')} refused: "
            f"{'its id is' if refused == 1 else 'their ids are'} stored with other text; {REFUSED_HINT}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK


# --- kb list, search, delete --------------------------------------------------------------------------

DOCUMENT_COLUMNS = [
    Column("id", lambda d: d.id),
    Column("title", lambda d: d.title, flexible=True),
    Column("passages", lambda d: f"{d.passage_count:,}", justify="right"),
    Column("characters", lambda d: f"{d.char_count:,}", justify="right", wide_only=True),
    Column("added", lambda d: view.local_time(d.created_at)),
    Column("url", lambda d: d.url or "—", wide_only=True),
    Column("sha-256", lambda d: d.content_sha256, wide_only=True),
]


def run_list(args: argparse.Namespace, channel) -> int:
    response = _stub(channel).ListDocuments(
        knowledge_pb2.ListDocumentsRequest(page_size=args.page_size, page_token=args.page_token),
        timeout=UNARY_TIMEOUT_S,
    )
    if args.json:
        print(render.proto_json(response))
        return EXIT_OK
    console = render.make_console()
    if not response.documents:
        console.print("No stored documents." if not args.page_token else "No more documents.")
    else:
        print_table(console, DOCUMENT_COLUMNS, response.documents, wide=args.wide)
    if response.next_page_token:
        console.print(next_page_command("factcheck kb list", response.next_page_token, args), soft_wrap=True)
    return EXIT_OK


def run_search(args: argparse.Namespace, channel) -> int:
    response = _stub(channel).Search(
        knowledge_pb2.SearchRequest(query=args.query, top_k=args.top_k), timeout=UNARY_TIMEOUT_S
    )
    if args.json:
        print(render.proto_json(response))
        return EXIT_OK
    if not response.passages:
        print("no passages match")
    for passage in response.passages:
        print(
            f"[{passage.id}] {passage_title(passage)} ({passage.source_id}, chars {passage.start_offset}-{passage.end_offset})"
        )
        print(f"    {passage.text}\n")
    return EXIT_OK


def run_delete(args: argparse.Namespace, channel) -> int:
    response = _stub(channel).DeleteDocument(
        knowledge_pb2.DeleteDocumentRequest(document_id=args.document_id), timeout=UNARY_TIMEOUT_S
    )
    print(f"deleted {args.document_id} ({counted(response.passages_deleted, 'passage')})")
    return EXIT_OK
