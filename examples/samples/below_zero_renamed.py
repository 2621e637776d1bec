from typing import List


def below_zero(operations: List[int]) -> bool:
    total = 0
    for amount in operations:
        total += amount
        if total < 0:
            return True
    return False
