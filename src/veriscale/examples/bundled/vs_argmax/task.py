# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    best = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[best]:
            best = i
    return best

# veriscale: postcondition
def postcondition(xs, result):
    return result < len(xs) and all(xs[result] >= x for x in xs)
