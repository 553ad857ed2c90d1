package main

func main() {
	if ok {
		run()
	}
}
