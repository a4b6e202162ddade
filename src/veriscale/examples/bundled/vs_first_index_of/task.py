# veriscale: aux

# veriscale: precondition
def precondition(xs, x):
    return True

# veriscale: reference
def reference(xs, x):
    for i, y in enumerate(xs):
        if y == x:
            return i
    return None

# veriscale: postcondition
def postcondition(xs, x, result):
    if result is None:
        return x not in xs
    return result < len(xs) and xs[result] == x and x not in xs[:result]
