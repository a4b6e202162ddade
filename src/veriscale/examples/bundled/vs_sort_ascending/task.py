# veriscale: aux
from collections import Counter
from itertools import pairwise


def is_sorted(xs):
    return all(a <= b for a, b in pairwise(xs))

# veriscale: precondition
def precondition(arr):
    return True

# veriscale: reference
def reference(arr):
    return sorted(arr)

# veriscale: postcondition
def postcondition(arr, result):
    return is_sorted(result) and Counter(result) == Counter(arr)
