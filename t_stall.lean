import Lean
import Std
-- VeriScale: compiled evaluation on this Lean (see veriscale.backends.lean.compiled_eval)
public section
@[extern "l_Lean_PersistentEnvExtension_addEntry___redArg"] opaque Lean.PersistentEnvExtension.addEntry._redArg : NonScalar → NonScalar → NonScalar → NonScalar → NonScalar → NonScalar
@[extern "l_Lean_PersistentEnvExtension_getModuleEntries___redArg"] opaque Lean.PersistentEnvExtension.getModuleEntries._redArg : NonScalar → NonScalar → NonScalar → NonScalar → NonScalar → NonScalar
@[extern "l_Lean_Name_beq___boxed"] opaque Lean.Name.beq._boxed : NonScalar → NonScalar → NonScalar
@[extern "l_Lean_Name_hash___override___boxed"] opaque Lean.Name.hash._override._boxed : NonScalar → NonScalar
end

namespace VeriScaleCompiledEval
def adoptBase (env0 : Lean.Environment) (arr : Array Lean.Compiler.LCNF.Decl) :
    Nat → Lean.Environment × Nat → Lean.Environment × Nat
  | 0, acc => acc
  | k+1, (env, n) =>
    let d := arr[k]!
    adoptBase env0 arr k (if (env0.getModuleIdxFor? d.name).isNone
      then (Lean.Compiler.LCNF.baseExt.addEntry env d, n + 1) else (env, n))
def adoptMono (env0 : Lean.Environment) (arr : Array Lean.Compiler.LCNF.Decl) :
    Nat → Lean.Environment × Nat → Lean.Environment × Nat
  | 0, acc => acc
  | k+1, (env, n) =>
    let d := arr[k]!
    adoptMono env0 arr k (if (env0.getModuleIdxFor? d.name).isNone
      then (Lean.Compiler.LCNF.monoExt.addEntry env d, n + 1) else (env, n))
def adoptIR (env0 : Lean.Environment) (arr : Array Lean.IR.Decl) :
    Nat → Lean.Environment × Nat → Lean.Environment × Nat
  | 0, acc => acc
  | k+1, (env, n) =>
    let d := arr[k]!
    adoptIR env0 arr k (if (env0.getModuleIdxFor? d.name).isNone
      then (Lean.IR.declMapExt.addEntry env d, n + 1) else (env, n))
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
  IO.println s!"VERISCALE_ADOPTED {n}"

set_option eval.pp false
def slow (n : Nat) : Nat := (List.range n).foldl (fun a b => (a + b * b) % 1000007) 0
#eval! slow 10
#eval! slow 100000000
#eval! 42
