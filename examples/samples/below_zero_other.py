from itertools import accumulate
from typing import List


def below_zero(operations: List[int]) -> bool:
    return any(b < 0 for b in accumulate(operations))
