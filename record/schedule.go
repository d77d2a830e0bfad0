package record

import (
	"context"
	"errors"
	"io"
)

// Schedule is a model counterexample to drive the run through.
type Schedule struct{}

func (c *capture) replay(ctx context.Context, s *Schedule) error {
	return usageErr("--schedule is not supported yet")
}

// ReadSchedule reads a counterexample trace (check --trace-json).
func ReadSchedule(r io.Reader) (*Schedule, error) { return nil, errors.New("not supported yet") }
