"""factcheck: gRPC fact-checking suite (shared package: settings, model client, services, command line).

`factcheck.v1`, the generated gRPC code, is not in this directory: it ships in the separate
factcheck-api distribution (api/src/factcheck/v1 in the repository), so other teams can install the
contract alone. Both distributions put modules under `factcheck`, so this package's path spans them:
installed side by side they share one site-packages/factcheck directory; otherwise
`pkgutil.extend_path` adds every other `factcheck` directory on sys.path. With factcheck-api alone,
`factcheck` is a namespace package (factcheck-api ships no factcheck/__init__.py).

Keep this file to the path: with editable installs run from outside a checkout (a console script),
Python may take `factcheck` for a namespace package and never run it (tests/test_generated_code.py).
"""

import pkgutil as _pkgutil
from pathlib import Path as _Path

__path__ = _pkgutil.extend_path(__path__, __name__)

# In a source checkout, the checkout's own generated code comes first, whichever factcheck-api an
# editable install elsewhere (another worktree) put on sys.path.
_checkout_api = str(_Path(__file__).resolve().parent.parent / "api" / "src" / "factcheck")
if _Path(_checkout_api).is_dir():
    __path__ = [__path__[0], _checkout_api, *(p for p in __path__[1:] if p != _checkout_api)]
del _pkgutil, _Path, _checkout_api
