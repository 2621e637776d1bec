def fizz_buzz(n: int):
    ns = []
    for i in range(n):
        if i % 11 == 0 or i % 13 == 0:
            ns.append(i)
    s = ''.join(map(str, ns))
    count = 0
    for c in s:
        if c == '7':
            count += 1
    return count
