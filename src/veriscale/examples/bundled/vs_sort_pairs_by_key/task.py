# veriscale: aux
from collections import Counter
from itertools import pairwise


# veriscale: precondition
def precondition(pairs):
    return True

# veriscale: reference
def reference(pairs):
    return sorted(pairs, key=lambda p: p[0])

# veriscale: postcondition
def postcondition(pairs, result):
    if Counter(result) != Counter(pairs):
        return False
    return all(a[0] <= b[0] for a, b in pairwise(result))
