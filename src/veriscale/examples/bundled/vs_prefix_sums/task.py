# veriscale: aux

# veriscale: precondition
def precondition(arr):
    return True

# veriscale: reference
def reference(arr):
    out = []
    total = 0
    for x in arr:
        total += x
        out.append(total)
    return out

# veriscale: postcondition
def postcondition(arr, result):
    if len(result) != len(arr):
        return False
    return all(result[i] == (result[i - 1] if i > 0 else 0) + arr[i] for i in range(len(arr)))
