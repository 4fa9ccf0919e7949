package listout

import (
	"bytes"
	"io"
	"runtime"
	"sync"
)

// Rows after the first are rendered in chunks of orderedChunk rows, as many chunks at once as
// there are processors (at least two); at most orderedInFlight chunks are rendered or waiting
// to be written at a time, so memory stays bounded whatever the list's length.
const (
	orderedChunk    = 256
	orderedInFlight = 8
)

// RowFunc renders one row to the writer its renderer was started with.
type RowFunc func(row []string) error

// Ordered renders rows on several renderers at once and writes what they render in the
// order the rows came: for a rendering that costs more per row than reading the row (a table
// through tablewriter: 11–16 µs a row, docs/performance.md). Each renderer is started once
// with a buffer of its own and renders whole chunks of rows; a row's text must not depend on
// the rows rendered before it.
type Ordered struct {
	w       io.Writer
	start   func(io.Writer) (RowFunc, error)
	chunk   [][]string       // rows not yet sent to a renderer
	pending []chan chunkText // the chunks sent, oldest first
	jobs    chan chunkJob    // to the renderers (nil until the first chunk)
	done    sync.WaitGroup   // the renderers
	err     error            // the first error: nothing is written after it
	told    bool             // err was returned by Add (Close does not return it again)
}

// chunkJob is a chunk of rows for a renderer, and where its text goes.
type chunkJob struct {
	rows [][]string
	out  chan<- chunkText
}

// chunkText is a rendered chunk.
type chunkText struct {
	text []byte
	err  error
}

// NewOrdered writes to w the rows renderers started by start render.
func NewOrdered(w io.Writer, start func(io.Writer) (RowFunc, error)) *Ordered {
	return &Ordered{w: w, start: start}
}

// Add renders row, with the other rows of its chunk once that is complete.
func (o *Ordered) Add(row []string) error {
	if o.err == nil {
		if o.chunk = append(o.chunk, row); len(o.chunk) < orderedChunk {
			return nil
		}
		o.err = o.send()
	}
	o.told = o.err != nil
	return o.err
}

// send hands the chunk to a renderer, starting them on the first, and writes the oldest
// chunk once orderedInFlight are out.
func (o *Ordered) send() error {
	if o.jobs == nil {
		o.jobs = make(chan chunkJob)
		for range max(2, runtime.GOMAXPROCS(0)) {
			o.done.Add(1)
			go o.render()
		}
	}
	out := make(chan chunkText, 1)
	o.jobs <- chunkJob{rows: o.chunk, out: out}
	o.chunk, o.pending = nil, append(o.pending, out)
	if len(o.pending) < orderedInFlight {
		return nil
	}
	return o.writeOldest()
}

// render renders the chunks it is given, each into its buffer, on one renderer.
func (o *Ordered) render() {
	defer o.done.Done()
	var buf bytes.Buffer
	row, err := o.start(&buf)
	for job := range o.jobs {
		for _, r := range job.rows {
			if err == nil {
				err = row(r)
			}
		}
		job.out <- chunkText{text: bytes.Clone(buf.Bytes()), err: err}
		buf.Reset()
	}
}

// writeOldest waits for the oldest chunk sent and writes it.
func (o *Ordered) writeOldest() error {
	c := <-o.pending[0]
	o.pending = o.pending[1:]
	if o.err = c.err; o.err == nil {
		_, o.err = o.w.Write(c.text)
	}
	return o.err
}

// Close renders the last rows and writes every chunk still out, in order; after an error it
// lets the renderers finish and writes nothing more. It returns the error Add has not.
func (o *Ordered) Close() error {
	if len(o.chunk) > 0 && o.err == nil {
		o.err = o.send()
	}
	for len(o.pending) > 0 && o.err == nil {
		o.err = o.writeOldest()
	}
	if o.jobs != nil {
		close(o.jobs)
		for _, out := range o.pending {
			<-out
		}
		o.pending = nil
		o.done.Wait()
	}
	if o.told {
		return nil
	}
	return o.err
}
