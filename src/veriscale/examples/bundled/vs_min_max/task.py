# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    lo = hi = xs[0]
    for x in xs[1:]:
        lo = min(lo, x)
        hi = max(hi, x)
    return (lo, hi)

# veriscale: postcondition
def postcondition(xs, result):
    lo, hi = result
    return lo in xs and hi in xs and all(lo <= x <= hi for x in xs)
