# veriscale: aux

# veriscale: precondition
def precondition(arr, i, j):
    return i < len(arr) and j < len(arr)

# veriscale: reference
def reference(arr, i, j):
    out = list(arr)
    out[i], out[j] = out[j], out[i]
    return out

# veriscale: postcondition
def postcondition(arr, i, j, result):
    if len(result) != len(arr):
        return False
    if result[i] != arr[j] or result[j] != arr[i]:
        return False
    return all(result[k] == arr[k] for k in range(len(arr)) if k != i and k != j)
