package open

import (
	"context"
	"errors"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/protocols"
)

// The open disciplines declare no symmetry (version-max orders values, so
// renaming them is not one): a run up to value renaming, or one checking
// it, is refused in every mode rather than counted concretely.
func TestOpenNoSymmetry(t *testing.T) {
	for _, name := range []string{"keyrange", "versionmax", "reread", "rewind"} {
		p, err := protocols.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range append([]string{""}, p.Limits.Modes...) {
			if len(p.Limits.Modes) > 0 && mode == "" {
				continue
			}
			cfg := p.Defaults
			cfg.Mode = mode
			for _, opts := range []explore.Options{{Symmetry: true}, {CheckSymmetry: true}} {
				if _, err := p.Check(context.Background(), cfg, opts); !errors.Is(err, explore.ErrNoSymmetry) {
					t.Errorf("%s %v %+v: error %v, want ErrNoSymmetry", name, cfg, opts, err)
				}
			}
		}
	}
}
