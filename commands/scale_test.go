package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// genhomeBinary is scripts/genhome, built once per test run.
var genhomeBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sessionctl-genhome-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "genhome")
	out, err := exec.Command("go", "build", "-o", bin, "../scripts/genhome").CombinedOutput()
	if err != nil {
		return "", &exec.Error{Name: "go build ../scripts/genhome: " + string(out), Err: err}
	}
	return bin, nil
})

// cmdGenhome generates a large home with scripts/genhome: `genhome FLAGS... -out DIR`
// (a pure function of the flags, so its output can be compared).
func cmdGenhome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: genhome FLAGS... -out DIR")
	}
	bin, err := genhomeBinary()
	if err != nil {
		ts.Fatalf("genhome: %v", err)
	}
	args = append([]string{"-q"}, args...)
	if n := len(args); args[n-2] == "-out" {
		args[n-1] = ts.MkAbs(args[n-1]) // genhome opens state.db by a file: URI
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = ts.Getenv("WORK")
	if out, err := cmd.CombinedOutput(); err != nil {
		ts.Fatalf("genhome: %v\n%s", err, out)
	}
}
