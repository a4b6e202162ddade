# veriscale: aux

# veriscale: precondition
def precondition(n):
    return True

# veriscale: reference
def reference(n):
    lo, hi = 0, n + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid * mid <= n:
            lo = mid
        else:
            hi = mid
    return lo

# veriscale: postcondition
def postcondition(n, result):
    return result * result <= n < (result + 1) * (result + 1)
