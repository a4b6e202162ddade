# veriscale: aux
from collections import Counter


# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    counts = Counter(xs)
    best = xs[0]
    for x in xs:
        if counts[x] > counts[best]:
            best = x
    return best

# veriscale: postcondition
def postcondition(xs, result):
    counts = Counter(xs)
    return result in counts and counts[result] == max(counts.values())
