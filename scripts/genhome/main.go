package main

import (
	"flag"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	path := flag.String("extract-schema", "", "")
	label := flag.String("label", "", "")
	flag.Parse()
	if err := extractSchema(os.Stdout, *path, *label); err != nil {
		panic(err)
	}
}
