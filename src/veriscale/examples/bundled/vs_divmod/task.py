# veriscale: aux

# veriscale: precondition
def precondition(a, b):
    return b > 0

# veriscale: reference
def reference(a, b):
    return (a // b, a % b)

# veriscale: postcondition
def postcondition(a, b, result):
    q, r = result
    return q * b + r == a and r < b
