

def fibonacci(n: int):
    """Return n-th Fibonacci number.
    >>> fibonacci(10)
    55
    >>> fibonacci(1)
    1
    >>> fibonacci(8)
    21
    """
