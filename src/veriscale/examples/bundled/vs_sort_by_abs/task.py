# veriscale: aux
from collections import Counter
from itertools import pairwise


# veriscale: precondition
def precondition(xs):
    return True

# veriscale: reference
def reference(xs):
    return sorted(xs, key=abs)

# veriscale: postcondition
def postcondition(xs, result):
    if Counter(result) != Counter(xs):
        return False
    return all(abs(a) <= abs(b) for a, b in pairwise(result))
