package record

import "context"

// Schedule is a model counterexample to drive the run through.
type Schedule struct{}

func (c *capture) replay(ctx context.Context, s *Schedule) error {
	return usageErr("--schedule is not supported yet")
}
