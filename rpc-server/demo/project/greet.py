def greet(name):
    """Return a friendly greeting for name."""
    return "Hello " + name


if __name__ == "__main__":
    print(greet("world"))
