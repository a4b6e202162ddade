# veriscale: aux

# veriscale: precondition
def precondition(nums, target):
    n = len(nums)
    return any(nums[i] + nums[j] == target for i in range(n) for j in range(i + 1, n))

# veriscale: reference
def reference(nums, target):
    seen = {}
    for j, x in enumerate(nums):
        if target - x in seen:
            return (seen[target - x], j)
        if x not in seen:
            seen[x] = j
    return (0, 0)

# veriscale: postcondition
def postcondition(nums, target, result):
    i, j = result
    return i < j < len(nums) and nums[i] + nums[j] == target
