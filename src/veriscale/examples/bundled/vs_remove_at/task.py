# veriscale: aux

# veriscale: precondition
def precondition(xs, i):
    return i < len(xs)

# veriscale: reference
def reference(xs, i):
    return xs[:i] + xs[i + 1:]

# veriscale: postcondition
def postcondition(xs, i, result):
    if len(result) != len(xs) - 1:
        return False
    return all(result[k] == (xs[k] if k < i else xs[k + 1]) for k in range(len(result)))
