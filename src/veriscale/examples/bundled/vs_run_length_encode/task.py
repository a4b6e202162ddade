# veriscale: aux
from itertools import pairwise


# veriscale: precondition
def precondition(xs):
    return True

# veriscale: reference
def reference(xs):
    runs = []
    for x in xs:
        if runs and runs[-1][0] == x:
            runs[-1] = (x, runs[-1][1] + 1)
        else:
            runs.append((x, 1))
    return runs

# veriscale: postcondition
def postcondition(xs, result):
    if any(count == 0 for _, count in result):
        return False
    if any(a[0] == b[0] for a, b in pairwise(result)):
        return False
    if sum(count for _, count in result) != len(xs):
        return False
    expanded = []
    for value, count in result:
        expanded.extend([value] * count)
    return expanded == xs
