version = "1.1.0"
DEBUG = False
main()
