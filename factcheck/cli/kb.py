"""`factcheck kb add|list|search|delete`: manage the knowledge store through the gateway's KnowledgeService."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.text import Text

import factcheck.cli.render as render
from factcheck.cli.client import EXIT_OK, EXIT_USAGE, UNARY_TIMEOUT_S, add_page_options, channel_command
from factcheck.cli.documents import NotText, document_files, read_document
from factcheck.text.evidence_text import passage_title
from factcheck.v1 import knowledge_pb2, knowledge_pb2_grpc

# One AddDocuments call stays well inside the gateway's limits (100 documents, 2 MB of text).
BATCH_DOCUMENTS, BATCH_BYTES = 50, 1_500_000


def add_parser(commands) -> None:
    parser = commands.add_parser("kb", help="manage the knowledge store the checkers verify against")
    actions = parser.add_subparsers(dest="kb_command", required=True, metavar="ACTION")

    add = actions.add_parser(
        "add",
        help="add .txt, .md and .html files (folders are searched recursively)",
        description="Add documents. Empty and binary files are skipped, each named on stderr; the rest are added.",
        epilog="exit codes: 0 added (or already stored), 2 a path that cannot be read or no file with text, "
        "3 the gateway is unreachable",
    )
    add.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a .txt, .md or .html file, or a folder")
    add.set_defaults(run=channel_command(run_add))

    listing = actions.add_parser("list", help="list stored documents, newest first (full ids, as `delete` takes)")
    add_page_options(listing, "documents")
    listing.add_argument("--json", action="store_true", help="print the page as one JSON object")
    listing.set_defaults(run=channel_command(run_list))

    search = actions.add_parser("search", help="full-text search over the stored passages")
    search.add_argument("query", help="the words to look for (any of them matches)")
    search.add_argument("--top-k", type=int, default=5, metavar="N", help="how many passages to show, 1-50 (default 5)")
    search.add_argument("--json", action="store_true", help="print the passages found as one JSON object")
    search.set_defaults(run=channel_command(run_search))

    delete = actions.add_parser(
        "delete",
        help="remove a document",
        epilog="exit codes: 0 deleted, 3 the gateway is unreachable, 5 no document with that id",
    )
    delete.add_argument("document_id", help="the document's id, as `kb list` and `kb add` print it")
    delete.set_defaults(run=channel_command(run_delete))


def _stub(channel) -> knowledge_pb2_grpc.KnowledgeServiceStub:
    return knowledge_pb2_grpc.KnowledgeServiceStub(channel)


def _batches(documents: list) -> list[list]:
    batches: list[list] = []
    current: list = []
    size = 0
    for document in documents:
        length = len(document.text.encode("utf-8"))
        if current and (len(current) == BATCH_DOCUMENTS or size + length > BATCH_BYTES):
            batches.append(current)
            current, size = [], 0
        current.append(document)
        size += length
    return batches + ([current] if current else [])


def add_paths(channel, paths: list[Path]) -> tuple[int, int]:
    """Add the documents under `paths`, printing a line each; returns (added, already stored).

    Raises ValueError for a path that cannot be read as a document.
    """
    documents = []
    for path, found_under in document_files(paths):
        try:
            documents.append(read_document(path, found_under))
        except NotText as skipped:
            # One empty or binary file must not keep a folder's other documents out.
            print(f"{'skipped':>14}  {skipped}", file=sys.stderr)
    if not documents:
        raise ValueError("no .txt, .md or .html files with text found")
    created = unchanged = passages = 0
    for batch in _batches(documents):
        response = _stub(channel).AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=batch), timeout=120)
        for document, added in zip(batch, response.documents):
            state = "added" if added.created else "already stored"
            print(f"{state:>14}  {added.document_id}  ({added.passage_count} passages)  {document.title}")
            created += added.created
            unchanged += not added.created
            passages += added.passage_count if added.created else 0
    print(f"{created} added ({passages} passages), {unchanged} already stored")
    return created, unchanged


def run_add(args: argparse.Namespace, channel) -> int:
    try:
        add_paths(channel, args.paths)
    except ValueError as error:
        print(f"factcheck kb add: {error}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


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
        console.print("No stored documents.")
    else:
        for document in response.documents:
            console.print(document_lines(document), soft_wrap=True)
    if response.next_page_token:
        console.print(f"next page: factcheck kb list --page-token {response.next_page_token}", soft_wrap=True)
    return EXIT_OK


def document_lines(document) -> Text:
    """A document as two lines: its whole id first (what `kb delete` takes; never cut to fit a table),
    then its title and size."""
    added = document.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M")
    return Text.assemble(
        render.plain(document.id, "bold"),
        "\n    ",
        render.plain(document.title),
        f" · {document.passage_count} passages · {document.char_count} characters · added {added}",
    )


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
    print(f"deleted {args.document_id} ({response.passages_deleted} passages)")
    return EXIT_OK
