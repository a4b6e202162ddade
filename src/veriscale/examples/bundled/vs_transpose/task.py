# veriscale: aux

# veriscale: precondition
def precondition(m):
    return len(m) > 0 and len(m[0]) > 0 and all(len(row) == len(m[0]) for row in m)

# veriscale: reference
def reference(m):
    return [[row[j] for row in m] for j in range(len(m[0]))]

# veriscale: postcondition
def postcondition(m, result):
    rows, cols = len(m), len(m[0])
    if len(result) != cols or any(len(r) != rows for r in result):
        return False
    return all(result[j][i] == m[i][j] for i in range(rows) for j in range(cols))
