def a():
    return 1
# ... rest of the code ...

def b():
    return 2
