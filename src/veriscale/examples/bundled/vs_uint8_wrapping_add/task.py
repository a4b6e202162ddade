# veriscale: aux

# veriscale: precondition
def precondition(a, b):
    return True

# veriscale: reference
def reference(a, b):
    total = a + b
    if total >= 256:
        total -= 256
    return total

# veriscale: postcondition
def postcondition(a, b, result):
    return result == (a + b) % 256
