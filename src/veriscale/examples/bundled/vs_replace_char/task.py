# veriscale: aux

# veriscale: precondition
def precondition(s, oldChar, newChar):
    return True

# veriscale: reference
def reference(s, oldChar, newChar):
    return "".join(newChar if c == oldChar else c for c in s)

# veriscale: postcondition
def postcondition(s, oldChar, newChar, result):
    if len(result) != len(s):
        return False
    return all(r == (newChar if c == oldChar else c) for c, r in zip(s, result, strict=True))
