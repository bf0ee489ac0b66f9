"""`factcheck-checker`: serve CheckerService on FACTCHECK_LISTEN (default port 50053). The built-in `local/`
and `onnx/` engines are registered here, where the process is composed (importing them registers nothing)."""

from factcheck.engines import register_builtin_engines
from factcheck.serving.server import run_model_service
from factcheck.v1 import checker_pb2, checker_pb2_grpc
from factcheck_checker.checker_service import CheckerService


def main() -> None:
    register_builtin_engines()
    run_model_service(
        "factcheck-checker",
        checker_pb2,
        "CheckerService",
        checker_pb2_grpc.add_CheckerServiceServicer_to_server,
        CheckerService,
    )


if __name__ == "__main__":
    main()
