# veriscale: aux

# veriscale: precondition
def precondition(chars):
    return True

# veriscale: reference
def reference(chars):
    return chars == chars[::-1]

# veriscale: postcondition
def postcondition(chars, result):
    n = len(chars)
    mirrored = all(chars[i] == chars[n - 1 - i] for i in range(n))
    return result == mirrored
