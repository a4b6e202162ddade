# veriscale: aux

# veriscale: precondition
def precondition(arr, i, x):
    return i <= len(arr)

# veriscale: reference
def reference(arr, i, x):
    return [*arr[:i], x, *arr[i:]]

# veriscale: postcondition
def postcondition(arr, i, x, result):
    if len(result) != len(arr) + 1 or result[i] != x:
        return False
    return all(arr[k] == (result[k] if k < i else result[k + 1]) for k in range(len(arr)))
