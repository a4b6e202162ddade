# veriscale: aux
from collections import Counter
from itertools import pairwise


def is_sorted(xs):
    return all(x <= y for x, y in pairwise(xs))

# veriscale: precondition
def precondition(a, b):
    return is_sorted(a) and is_sorted(b)

# veriscale: reference
def reference(a, b):
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]

# veriscale: postcondition
def postcondition(a, b, result):
    return is_sorted(result) and Counter(result) == Counter(a) + Counter(b)
