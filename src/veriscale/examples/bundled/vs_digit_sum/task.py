# veriscale: aux

# veriscale: precondition
def precondition(n):
    return True

# veriscale: reference
def reference(n):
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total

# veriscale: postcondition
def postcondition(n, result):
    digits = []
    while n > 0:
        n, d = divmod(n, 10)
        digits.append(d)
    return result == sum(digits)
