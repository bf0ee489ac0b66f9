"""KnowledgeService: add, delete, list and search the knowledge store's documents.

Every call works within the caller's tenant (`caller_tenant()`): another tenant's documents
are never listed, found or deleted, and their ids are NOT_FOUND exactly as unknown ones.

Nothing a caller added is overwritten without its consent: AddDocuments with a document whose id the
tenant already has, holding other text, is ALREADY_EXISTS (nothing stored) unless the request says
`replace`.
"""

from __future__ import annotations

import logging

import grpc

from factcheck.kit.errors import AlreadyExists, NotFound, Reason, check_argument
from factcheck.kit.security.tenants import caller_tenant
from factcheck.text.text_safety import excerpt
from factcheck.text.wording import counted
from factcheck.v1 import knowledge_pb2, knowledge_pb2_grpc
from factcheck_gateway.knowledge.passage_store import DocumentsExist, DocumentSummary, KnowledgeStore
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.request_validation import validate_sources
from factcheck_gateway.runs.database_calls import call_store, page_size, resource_id
from factcheck_gateway.stored_results import timestamp

log = logging.getLogger("factcheck.gateway.knowledge")

MAX_DOCUMENTS_PER_CALL = 100
DEFAULT_TOP_K, MAX_TOP_K = 5, 50
MAX_QUERY_CHARS = 2_000
STORE_UNAVAILABLE = "The knowledge store is unavailable. Try again shortly."
# ErrorInfo metadata values are cut at 200 characters: the indexes of the documents at fault stay whole.
MAX_INDEXES_CHARS = 200


class KnowledgeService(knowledge_pb2_grpc.KnowledgeServiceServicer):
    def __init__(self, store: KnowledgeStore, retriever: Retriever) -> None:
        self._store = store
        self._retriever = retriever

    async def AddDocuments(
        self, request: knowledge_pb2.AddDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> knowledge_pb2.AddDocumentsResponse:
        documents = validate_sources(
            request.documents, "documents", max_count=MAX_DOCUMENTS_PER_CALL, name_missing=False
        )
        check_argument(documents, "documents", "documents must list at least one document")
        try:
            added = await call_store(
                STORE_UNAVAILABLE,
                self._store.add_documents,
                list(documents),
                tenant_id=caller_tenant(),
                replace=request.replace,
            )
        except DocumentsExist as exists:
            raise already_stored(exists.conflicts) from None
        self._retriever.forget_documents(caller_tenant())
        return knowledge_pb2.AddDocumentsResponse(
            documents=[
                knowledge_pb2.AddedDocument(
                    document_id=a.document_id, created=a.created, passage_count=a.passage_count, replaced=a.replaced
                )
                for a in added
            ]
        )

    async def DeleteDocument(
        self, request: knowledge_pb2.DeleteDocumentRequest, context: grpc.aio.ServicerContext
    ) -> knowledge_pb2.DeleteDocumentResponse:
        document_id = resource_id("document_id", request.document_id)
        try:
            deleted = await call_store(
                STORE_UNAVAILABLE, self._store.delete_document, document_id, tenant_id=caller_tenant()
            )
            self._retriever.forget_documents(caller_tenant())
        except LookupError:
            raise NotFound(
                f"No document with id '{excerpt(document_id)}'",
                reason=Reason.DOCUMENT_NOT_FOUND,
                resource_type="factcheck.v1.Document",
                resource_name=document_id,
            ) from None
        return knowledge_pb2.DeleteDocumentResponse(passages_deleted=deleted)

    async def ListDocuments(
        self, request: knowledge_pb2.ListDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> knowledge_pb2.ListDocumentsResponse:
        documents, next_token = await call_store(
            STORE_UNAVAILABLE,
            self._store.list_documents,
            page_size(request.page_size),
            request.page_token or None,
            tenant_id=caller_tenant(),
        )
        return knowledge_pb2.ListDocumentsResponse(
            documents=[_summary(d) for d in documents], next_page_token=next_token or ""
        )

    async def Search(
        self, request: knowledge_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> knowledge_pb2.SearchResponse:
        check_argument(request.query.strip(), "query", "query is required")
        check_argument(
            len(request.query) <= MAX_QUERY_CHARS, "query", f"query must be at most {MAX_QUERY_CHARS} characters"
        )
        check_argument(
            0 <= request.top_k <= MAX_TOP_K, "top_k", f"top_k must be between 1 and {MAX_TOP_K} (got {request.top_k})"
        )
        evidence = await call_store(
            STORE_UNAVAILABLE,
            self._retriever.retrieve,
            {"query": request.query},
            (),
            use_store=True,
            top_k=request.top_k or DEFAULT_TOP_K,
            tenant_id=caller_tenant(),
        )
        return knowledge_pb2.SearchResponse(passages=evidence.passages)


def already_stored(conflicts: list[tuple[int, str]]) -> AlreadyExists:
    """ALREADY_EXISTS for the documents that would overwrite stored ones: the message names the first,
    ErrorInfo.metadata["document_indexes"] lists every one that fits ("0,3,7"), ResourceInfo the first."""
    index, document_id = conflicts[0]
    more = f" (and {counted(len(conflicts) - 1, 'more document')})" if len(conflicts) > 1 else ""
    indexes = ""
    for position, _ in conflicts:
        if len(indexes) + len(str(position)) + 1 > MAX_INDEXES_CHARS:
            break
        indexes = f"{indexes},{position}" if indexes else str(position)
    return AlreadyExists(
        f"documents[{index}]: a document with id '{excerpt(document_id)}' is already stored with other text{more}; "
        "set replace to overwrite it, or give the document another id",
        reason=Reason.DOCUMENT_ALREADY_EXISTS,
        resource_type="factcheck.v1.Document",
        resource_name=document_id,
        metadata={"document_indexes": indexes},
    )


def _summary(document: DocumentSummary) -> knowledge_pb2.DocumentSummary:
    summary = knowledge_pb2.DocumentSummary(
        id=document.id,
        title=document.title,
        url=document.url,
        passage_count=document.passage_count,
        char_count=document.char_count,
        content_sha256=document.content_sha256,
        created_at=timestamp(document.created_at),
    )
    if document.published_at is not None:
        summary.published_at = document.published_at
    if document.authority is not None:
        summary.authority = document.authority
    return summary
