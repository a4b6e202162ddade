# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return True

# veriscale: reference
def reference(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out

# veriscale: postcondition
def postcondition(xs, result):
    firsts = [xs[i] for i in range(len(xs)) if xs[i] not in xs[:i]]
    return result == firsts
