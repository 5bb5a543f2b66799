print("stand-in")
