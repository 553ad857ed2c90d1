package main

func main() {
	if ok {
		stop()
		wait()
	}
}
