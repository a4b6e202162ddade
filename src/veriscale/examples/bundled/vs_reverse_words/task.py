# veriscale: aux

# veriscale: precondition
def precondition(s):
    return "  " not in s and not s.startswith(" ") and not s.endswith(" ")

# veriscale: reference
def reference(s):
    return " ".join(reversed(s.split(" ")))

# veriscale: postcondition
def postcondition(s, result):
    return result.split(" ") == list(reversed(s.split(" ")))
