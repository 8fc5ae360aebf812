package testutil

import "context"

// StopAfter returns a Stop hook of the engines' options (ep.Options.Stop,
// laplace.Options.Stop, gp.LowRankOptions.Stop) that answers nil to its
// first after calls and context.Canceled from then on, and the count of
// its calls.
func StopAfter(after int) (stop func() error, calls *int) {
	calls = new(int)
	return func() error {
		*calls++
		if *calls > after {
			return context.Canceled
		}
		return nil
	}, calls
}
