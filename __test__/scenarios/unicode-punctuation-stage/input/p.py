print(“hi”)  # — note
