# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return True

# veriscale: reference
def reference(xs):
    seen = []
    for x in xs:
        if x not in seen:
            seen.append(x)
    return len(seen)

# veriscale: postcondition
def postcondition(xs, result):
    first_occurrences = [i for i in range(len(xs)) if xs[i] not in xs[:i]]
    return result == len(first_occurrences)
