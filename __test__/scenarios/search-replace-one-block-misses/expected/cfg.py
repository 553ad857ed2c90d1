version = "1.0.0"
DEBUG = True
# TODO: Remove this
debug_code()
main()
