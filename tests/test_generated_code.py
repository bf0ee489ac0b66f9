"""The committed generated code (factcheck-api, api/src/factcheck/v1) must be exactly what the protos produce."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_protos", ROOT / "scripts" / "generate_protos.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_code_matches_protos(tmp_path):
    generator = _load_generator()
    fresh = {path.name: path.read_bytes() for path in generator.generate(tmp_path)}
    committed_dir = generator.API_SOURCE_ROOT / "factcheck" / "v1"
    committed = {
        path.name: path.read_bytes()
        for path in committed_dir.iterdir()
        if path.name.endswith(generator.GENERATED_SUFFIXES)
    }
    assert set(fresh) == set(committed), "generated files differ: run `python scripts/generate_protos.py`"
    stale = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not stale, f"stale generated code {stale}: run `python scripts/generate_protos.py`"
    assert {"factcheck_pb2.py", "factcheck_pb2.pyi", "factcheck_pb2_grpc.py"} <= set(committed)
    # One committed copy of the code: none left in the suite's own package.
    assert not (ROOT / "factcheck" / "v1").exists()


def test_the_protos_have_one_copy():
    # protos/ is what buf lints, what both generators read and what factcheck-api's wheel carries (api/setup.py).
    protos = sorted(path for path in _repository_files() if path.suffix == ".proto")
    assert protos and all(path.parts[:3] == ("protos", "factcheck", "v1") for path in protos), protos


def test_the_suite_imports_the_checkouts_own_generated_code():
    import factcheck.v1

    assert Path(factcheck.v1.__file__).parent == ROOT / "api" / "src" / "factcheck" / "v1"


def test_every_enum_has_an_unspecified_zero_value():
    from factcheck.v1 import citations_pb2, common_pb2, council_pb2, entailment_pb2, factcheck_pb2

    for module in (citations_pb2, common_pb2, council_pb2, entailment_pb2, factcheck_pb2):
        for enum in module.DESCRIPTOR.enum_types_by_name.values():
            assert enum.values_by_number[0].name == f"{_upper_snake(enum.name)}_UNSPECIFIED"


def test_event_oneof_covers_the_spec_sequence():
    from factcheck.v1 import factcheck_pb2

    oneof = factcheck_pb2.FactCheckEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert [field.name for field in oneof.fields] == [
        "factcheck_start",
        "generate_start",
        "generate_complete",
        "extract_start",
        "extract_complete",
        "evidence_retrieved",
        "verify_start",
        "checker_complete",
        "all_checkers_complete",
        "report_start",
        "report_complete",
        "title_complete",
        "complete",
        "error",
        "cancelled",  # the final event of a cancelled run (durable runs)
        "claims_extracted",  # pipelined runs only (FactCheckConfig.pipelined)
        "checker_batch_complete",  # pipelined runs only
        # council mode
        "respond_start",
        "response_complete",
        "response_failed",
        "responses_anonymised",
        "council_check_start",
        "council_check_complete",
        "council_check_failed",
        "council_aggregate_complete",
        "synthesis_start",
        "synthesis_complete",
        # entailment mode
        "entailment_start",
        "entailment_agent_complete",
        "entailment_agent_failed",
        "entailment_item_complete",
        "entailment_item_failed",
        "entailment_complete",
        # claim-level citations (FactCheckConfig.citations)
        "claim_verified",
        "numeric_claim_detected",
        "citation_corrected",
        "verification_summary",
        # fact-check mode's verification loop (FactCheckConfig.investigate)
        "investigation_start",
        "claim_investigated",
        "investigation_complete",
        "review_decided",  # after the run ended, when a person decides a pending review
    ]


def _upper_snake(name: str) -> str:
    out = "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name))
    return out.upper()


def _repository_files() -> list[Path]:
    """The checkout's files, relative to it, less what an install or a build leaves (.venv, node_modules, build/)."""
    files = []
    for directory, subdirectories, names in os.walk(ROOT):
        subdirectories[:] = [name for name in subdirectories if name not in {".git", ".venv", "node_modules", "build"}]
        files += [(Path(directory) / name).relative_to(ROOT) for name in names]
    return files


def test_factcheck_is_a_namespace_package_of_both_distributions(tmp_path):
    # Neither distribution has factcheck/__init__.py: Python joins their `factcheck` directories itself,
    # from a checkout or from anywhere else (a console script's, with editable installs).
    inits = [path for path in _repository_files() if path.parts[-2:] == ("factcheck", "__init__.py")]
    assert inits == []
    probe = (
        "import factcheck, factcheck.kit.settings, factcheck.v1.common_pb2; "
        "print(factcheck.__file__, factcheck.kit.settings.__file__, factcheck.v1.common_pb2.__file__, sep='\\n')"
    )
    # From tmp_path, not the checkout: the current directory's `factcheck` may not be the one found.
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    package_file, kit_file, generated_file = done.stdout.splitlines()
    assert package_file == "None"
    assert Path(kit_file).is_relative_to(ROOT / "factcheck")
    assert Path(generated_file).is_relative_to(ROOT / "api" / "src" / "factcheck" / "v1")
