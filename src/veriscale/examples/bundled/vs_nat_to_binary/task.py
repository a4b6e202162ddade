# veriscale: aux

# veriscale: precondition
def precondition(n):
    return True

# veriscale: reference
def reference(n):
    if n == 0:
        return "0"
    bits = []
    while n > 0:
        bits.append(str(n % 2))
        n //= 2
    return "".join(reversed(bits))

# veriscale: postcondition
def postcondition(n, result):
    if result == "" or any(c not in "01" for c in result):
        return False
    if len(result) > 1 and result[0] == "0":
        return False
    return int(result, 2) == n
