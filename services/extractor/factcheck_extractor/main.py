"""`factcheck-extractor`: serve ExtractorService on FACTCHECK_LISTEN (default port 50052)."""

from factcheck.serving.server import run_model_service
from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from factcheck_extractor.extractor_service import ExtractorService


def main() -> None:
    run_model_service(
        "factcheck-extractor",
        extractor_pb2,
        "ExtractorService",
        extractor_pb2_grpc.add_ExtractorServiceServicer_to_server,
        ExtractorService,
    )


if __name__ == "__main__":
    main()
