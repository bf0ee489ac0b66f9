"""The built-in `local/` engines: the suite's embedded default models.

Each engine module exposes `answer(prompt: str) -> str` and replies in the spec's text
formats, so the same parsers, consensus and report run on its output. Modules are
imported on first use, so a process pays only for the engines it calls.

| model id | module | answers |
|---|---|---|
| local/generator | generator | the generate prompt, from its SOURCES passages |
| local/extractor | extractor | the extraction prompt |
| local/checker | checker | the verification prompt, against its EVIDENCE passages |
| local/reporter | reporter | the report prompt, and the title prompt (the reporter model writes titles) |
| local/title | reporter | the title prompt |
"""

from __future__ import annotations

import importlib

from factcheck.models.local import LocalEngine, register_local_engine

ENGINE_MODULES = {
    "generator": "generator",
    "extractor": "extractor",
    "checker": "checker",
    "reporter": "reporter",
    "title": "reporter",
}


def _lazy_engine(module_name: str) -> LocalEngine:
    def engine(prompt: str) -> str:
        module = importlib.import_module(f"{__name__}.{module_name}")
        return module.answer(prompt)

    return engine


for _name, _module in ENGINE_MODULES.items():
    register_local_engine(_name, _lazy_engine(_module))
