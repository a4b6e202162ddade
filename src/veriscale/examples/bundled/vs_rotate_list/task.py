# veriscale: aux

# veriscale: precondition
def precondition(xs, k):
    return True

# veriscale: reference
def reference(xs, k):
    if not xs:
        return []
    shift = k % len(xs)
    return xs[shift:] + xs[:shift]

# veriscale: postcondition
def postcondition(xs, k, result):
    n = len(xs)
    if len(result) != n:
        return False
    return all(result[i] == xs[(i + k) % n] for i in range(n))
