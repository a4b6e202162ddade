# veriscale: aux
from itertools import pairwise


# veriscale: precondition
def precondition(arr):
    return True

# veriscale: reference
def reference(arr):
    return all(a <= b for a, b in pairwise(arr))

# veriscale: postcondition
def postcondition(arr, result):
    return result == all(arr[i] <= arr[i + 1] for i in range(len(arr) - 1))
