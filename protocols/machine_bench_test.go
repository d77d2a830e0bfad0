package protocols_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/protocols"
)

// BenchmarkDefineMachine explores the row copier (Example_rowCopier) to the
// end with DefineMachine's codec and, side by side, with a codec written by
// hand and with the engine's default codec, and reports distinct states per
// second of the runs' own time.
func BenchmarkDefineMachine(b *testing.B) {
	cfg := protocols.Config{Keys: 3, Values: 2, Events: 4, Chunks: 2, Txn: 2, Sink: model.InsertIgnore}
	p := protocols.DefineMachine(&protocols.Protocol{
		Name:   "row-copier",
		Limits: protocols.Limits{Keys: model.MaxKeys, Values: 8, Events: model.MaxLog, Chunks: model.MaxUnits, Txn: protocols.MaxTxn},
	}, func(cfg protocols.Config) explore.Machine[model.Capture, copierAction] { return copier{cfg} })
	opts := explore.Options{Workers: 1, Continue: true}
	for _, tc := range []struct {
		name string
		run  func() (explore.Stats, error)
	}{
		{"derived", func() (explore.Stats, error) {
			rep, err := p.Check(context.Background(), cfg, opts)
			return rep.Stats, err
		}},
		{"hand", func() (explore.Stats, error) {
			m := explore.Extend(explore.Machine[model.Capture, copierAction](handCopier{copier{cfg}}), explore.Extra[model.Capture, copierAction]{
				Done: func(c *model.Capture) bool { return protocols.AtRest(c, &cfg) },
			})
			r, err := explore.Run(context.Background(), m, opts)
			return r.Stats, err
		}},
		{"default", func() (explore.Stats, error) {
			m := explore.Extend(explore.Machine[model.Capture, copierAction](copier{cfg}), explore.Extra[model.Capture, copierAction]{
				Done: func(c *model.Capture) bool { return protocols.AtRest(c, &cfg) },
			})
			r, err := explore.Run(context.Background(), m, opts)
			return r.Stats, err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var distinct uint64
			var secs float64
			for b.Loop() {
				st, err := tc.run()
				if err != nil {
					b.Fatal(err)
				}
				distinct += st.Distinct
				secs += st.Elapsed.Seconds()
			}
			b.ReportMetric(float64(distinct)/secs, "distinct/s")
			b.ReportMetric(float64(distinct)/float64(b.N), "distinct")
		})
	}
}

// handCopier is the row copier with its codec written by hand.
type handCopier struct{ copier }

func (handCopier) Encode(c *model.Capture, buf []byte) []byte { return c.AppendTo(buf) }

func (handCopier) Decode(b []byte, c *model.Capture) error {
	if rest, ok := c.DecodeFrom(b); !ok || len(rest) != 0 {
		return errors.New("bad state encoding")
	}
	return nil
}
