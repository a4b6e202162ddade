# veriscale: aux

# veriscale: precondition
def precondition(s, c):
    return True

# veriscale: reference
def reference(s, c):
    count = 0
    for ch in s:
        if ch == c:
            count += 1
    return count

# veriscale: postcondition
def postcondition(s, c, result):
    return result == len([i for i in range(len(s)) if s[i] == c])
