def fizz_buzz(n: int):
    """Return the number of times the digit 7 appears in integers less than n which are
    divisible by 11 or 13.
    """
    ns = []
    for i in range(n):
        if i % 11 == 0 or i % 13 == 0:
            ns.append(i)
    s = ''.join(list(map(str, ns)))
    ans = 0
    for c in s:
        ans += (c == '7')
    return ans
