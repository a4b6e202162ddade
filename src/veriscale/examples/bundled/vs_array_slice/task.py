# veriscale: aux

# veriscale: precondition
def precondition(arr, start, stop):
    return start <= stop <= len(arr)

# veriscale: reference
def reference(arr, start, stop):
    return arr[start:stop]

# veriscale: postcondition
def postcondition(arr, start, stop, result):
    if len(result) != stop - start:
        return False
    return all(result[k] == arr[start + k] for k in range(len(result)))
