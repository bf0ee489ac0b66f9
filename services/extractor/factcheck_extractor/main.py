"""`factcheck-extractor`: serve ExtractorService on FACTCHECK_LISTEN (default port 50052). The built-in `local/`
and `onnx/` engines are registered here, where the process is composed (importing them registers nothing)."""

from factcheck.engines import register_builtin_engines
from factcheck.serving.server import run_model_service
from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from factcheck_extractor.extractor_service import ExtractorService


def main() -> None:
    register_builtin_engines()
    run_model_service(
        "factcheck-extractor",
        extractor_pb2,
        "ExtractorService",
        extractor_pb2_grpc.add_ExtractorServiceServicer_to_server,
        ExtractorService,
    )


if __name__ == "__main__":
    main()
