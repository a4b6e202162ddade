# veriscale: aux
from itertools import pairwise


def is_sorted(xs):
    return all(a <= b for a, b in pairwise(xs))

# veriscale: precondition
def precondition(arr, target):
    return is_sorted(arr)

# veriscale: reference
def reference(arr, target):
    lo, hi = 0, len(arr)
    while lo < hi:
        mid = (lo + hi) // 2
        if arr[mid] == target:
            return mid
        if arr[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return None

# veriscale: postcondition
def postcondition(arr, target, result):
    if result is None:
        return target not in arr
    return result < len(arr) and arr[result] == target
