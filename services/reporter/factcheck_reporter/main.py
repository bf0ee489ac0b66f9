"""`factcheck-reporter`: serve ReporterService on FACTCHECK_LISTEN (default port 50054). The built-in `local/`
and `onnx/` engines are registered here, where the process is composed (importing them registers nothing)."""

from factcheck.engines import register_builtin_engines
from factcheck.serving.server import run_model_service
from factcheck.v1 import reporter_pb2, reporter_pb2_grpc
from factcheck_reporter.reporter_service import ReporterService


def main() -> None:
    register_builtin_engines()
    run_model_service(
        "factcheck-reporter",
        reporter_pb2,
        "ReporterService",
        reporter_pb2_grpc.add_ReporterServiceServicer_to_server,
        ReporterService,
    )


if __name__ == "__main__":
    main()
