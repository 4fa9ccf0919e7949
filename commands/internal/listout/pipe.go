package listout

import "context"

// pipeDepth is how many items the reader of a list may be ahead of its writer.
const pipeDepth = 1024

// Pipe runs produce on its own goroutine and hands what it emits, in order, to consume on the
// caller's: reading a list (state.db pages) and writing it (a table, JSON) overlap instead of
// taking turns. It returns the first error: consume's (which stops produce) or produce's.
func Pipe[T any](ctx context.Context, produce func(ctx context.Context, emit func(T) error) error, consume func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan T, pipeDepth)
	done := make(chan error, 1)
	go func() {
		defer close(items)
		done <- produce(ctx, func(v T) error {
			select {
			case items <- v:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for v := range items {
		if err := consume(v); err != nil {
			cancel()
			for range items { // let produce see the cancel and end
			}
			return err
		}
	}
	return <-done
}
