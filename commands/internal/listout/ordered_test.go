package listout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestOrdered: rows rendered on several renderers come out in the order they went in, every
// one of them, for lists shorter than a chunk, of whole chunks and of many chunks.
func TestOrdered(t *testing.T) {
	for _, n := range []int{0, 1, orderedChunk, orderedChunk*orderedInFlight*3 + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var out bytes.Buffer
			o := NewOrdered(&out, func(w io.Writer) (RowFunc, error) {
				return func(row []string) error {
					_, err := fmt.Fprintln(w, strings.Join(row, " "))
					return err
				}, nil
			})
			var want strings.Builder
			for i := range n {
				row := []string{"row", fmt.Sprint(i)}
				fmt.Fprintln(&want, strings.Join(row, " "))
				if err := o.Add(row); err != nil {
					t.Fatal(err)
				}
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want.String() {
				t.Errorf("%d rows: the output is not the rows in order (%d bytes, want %d)", n, out.Len(), want.Len())
			}
		})
	}
}

// TestOrderedError: a renderer's error is returned (by Add or Close), nothing after the
// failed chunk is written, and Close ends (the renderers are not left waiting).
func TestOrderedError(t *testing.T) {
	bad := errors.New("cannot render")
	var out bytes.Buffer
	o := NewOrdered(&out, func(w io.Writer) (RowFunc, error) {
		return func(row []string) error {
			if row[0] == "1000" {
				return bad
			}
			_, err := fmt.Fprintln(w, row[0])
			return err
		}, nil
	})
	var err error
	for i := 0; i < orderedChunk*orderedInFlight*4 && err == nil; i++ {
		err = o.Add([]string{fmt.Sprint(i)})
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if !errors.Is(err, bad) {
		t.Fatalf("error %v, want the renderer's", err)
	}
	if lines := strings.Count(out.String(), "\n"); lines >= 1000 {
		t.Errorf("%d lines written, want fewer than the failed row's 1000", lines)
	}
}
