# veriscale: aux
import math


# veriscale: precondition
def precondition(a, b):
    return a > 0 or b > 0

# veriscale: reference
def reference(a, b):
    while b > 0:
        a, b = b, a % b
    return a

# veriscale: postcondition
def postcondition(a, b, result):
    if result == 0 or a % result != 0 or b % result != 0:
        return False
    return math.gcd(a // result, b // result) == 1
