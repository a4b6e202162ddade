"""Compiled evaluation (``#eval``) on the WebAssembly Lean: the prelude that makes it work.

Why it is needed (``shared/lean/compiled-eval/README.md`` has the measurements): the
WASM build's loader does not index the compiler's auxiliary declarations
(``List.lengthTR._redArg``, ...) by module, although their LCNF and IR entries are in the
shipped ``.olean`` files and their native code is in ``lean.wasm``. The compiler's
look-ups search a module's entries only when that index answers, so ``#eval`` of
anything that calls such an auxiliary stops with "Unknown constant". The prelude
copies every compiler entry that has no module index into the extensions' local
state (about 68,000 entries, under a second), after which the interpreter finds them.

The prelude is the tool's own text, never a candidate's: it is the one place in a
Lean file with ``@[extern]`` and ``run_cmd``, which the screen refuses in candidates.
It opens no namespace, so task code resolves its names exactly as without it.
"""

from __future__ import annotations

IMPORTS = ("Lean", "Std")
"""What the adopter reads (``Lean``'s compiler extensions) and what tasks may call (``Std``)."""

ADOPTED = "VERISCALE_ADOPTED"
"""What the prelude prints (an information message of the header), with the number of
entries adopted. (``IO.println``: ``logInfo`` itself needs an unindexed auxiliary.)"""

_AUX = (  # (declaration, native symbol, arity): compiler auxiliaries the adopter calls
    ("Lean.PersistentEnvExtension.addEntry._redArg",
     "l_Lean_PersistentEnvExtension_addEntry___redArg", 5),
    ("Lean.PersistentEnvExtension.getModuleEntries._redArg",
     "l_Lean_PersistentEnvExtension_getModuleEntries___redArg", 5),
    ("Lean.Name.beq._boxed", "l_Lean_Name_beq___boxed", 2),
    ("Lean.Name.hash._override._boxed", "l_Lean_Name_hash___override___boxed", 1),
)


def _shim(name: str, symbol: str, arity: int) -> str:
    # Every parameter an object: the C signature of these symbols (ABI-safe).
    arrows = " → ".join(["NonScalar"] * (arity + 1))
    return f'@[extern "{symbol}"] opaque {name} : {arrows}'


def _adopter(fn: str, ext: str, decl: str) -> str:
    """``fn env0 arr k acc``: add the entries of ``arr`` (below ``k``) that have no
    module index to ``ext``'s local state. Plain ``Nat`` recursion: ``for`` over an
    ``Array`` would need one more unindexed auxiliary."""
    return f"""def {fn} (env0 : Lean.Environment) (arr : Array {decl}) :
    Nat → Lean.Environment × Nat → Lean.Environment × Nat
  | 0, acc => acc
  | k+1, (env, n) =>
    let d := arr[k]!
    {fn} env0 arr k (if (env0.getModuleIdxFor? d.name).isNone
      then ({ext}.addEntry env d, n + 1) else (env, n))"""


def prelude() -> str:
    """The Lean text that goes after the imports (:data:`IMPORTS`) of a compiled-mode file."""
    shims = "\n".join(_shim(*aux) for aux in _AUX)
    lcnf, ir = "Lean.Compiler.LCNF.Decl", "Lean.IR.Decl"
    return f"""-- VeriScale: compiled evaluation on this Lean (see veriscale.backends.lean.compiled_eval)
public section
{shims}
end

namespace VeriScaleCompiledEval
{_adopter("adoptBase", "Lean.Compiler.LCNF.baseExt", lcnf)}
{_adopter("adoptMono", "Lean.Compiler.LCNF.monoExt", lcnf)}
{_adopter("adoptIR", "Lean.IR.declMapExt", ir)}
def adoptModules (env0 : Lean.Environment) : Nat → Lean.Environment × Nat → Lean.Environment × Nat
  | 0, acc => acc
  | i+1, acc =>
    let base := Lean.Compiler.LCNF.baseExt.getModuleEntries env0 i
    let mono := Lean.Compiler.LCNF.monoExt.getModuleEntries env0 i
    let ir := Lean.IR.declMapExt.getModuleEntries env0 i
    let acc := adoptIR env0 ir ir.size (adoptMono env0 mono mono.size (adoptBase env0 base base.size acc))
    adoptModules env0 i acc
end VeriScaleCompiledEval

run_cmd do
  let env ← Lean.getEnv
  let (env', n) := VeriScaleCompiledEval.adoptModules env env.header.moduleNames.size (env, 0)
  Lean.setEnv env'
  IO.println s!"{ADOPTED} {{n}}"
"""
