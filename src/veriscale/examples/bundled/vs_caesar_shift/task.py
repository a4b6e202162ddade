# veriscale: aux
LOWER = "abcdefghijklmnopqrstuvwxyz"

# veriscale: precondition
def precondition(s, k):
    return True

# veriscale: reference
def reference(s, k):
    out = []
    for c in s:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - ord("a") + k) % 26 + ord("a")))
        else:
            out.append(c)
    return "".join(out)

# veriscale: postcondition
def postcondition(s, k, result):
    if len(result) != len(s):
        return False
    for c, r in zip(s, result, strict=True):
        expected = LOWER[(LOWER.index(c) + k) % 26] if c in LOWER else c
        if r != expected:
            return False
    return True
