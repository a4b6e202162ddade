# veriscale: aux

# veriscale: precondition
def precondition(digits):
    return all(d in (0, 1) for d in digits)

# veriscale: reference
def reference(digits):
    value = 0
    for d in digits:
        value = value * 2 + d
    return value

# veriscale: postcondition
def postcondition(digits, result):
    n = len(digits)
    return result == sum(d * 2 ** (n - 1 - i) for i, d in enumerate(digits))
