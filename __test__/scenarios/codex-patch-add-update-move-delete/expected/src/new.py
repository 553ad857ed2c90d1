print("new")
