package specs

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// Reference: Def. 2.1. The coord-base field is a first position: a bad one
// is one line naming the field and the range, never a panic; a good one
// reaches the config, the bounds the table shows, and the search identity
// (so that checkpoints and shard results of two bases are not mixed), which
// base 1 leaves as it was.
func TestSpecCoordBase(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"protocol":"classic","expect":"pass","coord-base":0}`, `field "coord-base": 0 is not a first position (1..65536)`},
		{`{"protocol":"classic","expect":"pass","coord-base":-8}`, `field "coord-base": -8 is not a first position (1..65536)`},
		{`{"protocol":"classic","expect":"pass","coord-base":65537}`, `field "coord-base": 65537 is not a first position (1..65536)`},
		{`{"protocol":"classic","expect":"pass","coord-base":"8"}`, `field "coord-base": expected int, got string`},
		{`{"protocol":"classic","expect":"pass","coord-base":8.5}`, `field "coord-base": expected int, got number 8.5`},
		{`{"protocol":"classic","expect":"pass","coord-base":1e20}`, `field "coord-base": expected int`},
		{`{"protocol":"classic","expect":"pass","coord-base":null}`, `field "coord-base": null is not a value`},
	} {
		_, err := Parse("specs/x.json", []byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%s) = %v, want one line with %q", tt.body, err, tt.want)
		}
	}
	fingerprint := func(body string) (string, string) {
		s, err := Parse("specs/x.json", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.Identity(explore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.String(), id.Fingerprint()
	}
	plainBounds, plain := fingerprint(`{"protocol":"classic","expect":"pass"}`)
	oneBounds, one := fingerprint(`{"protocol":"classic","expect":"pass","coord-base":1}`)
	eightBounds, eight := fingerprint(`{"protocol":"classic","expect":"pass","coord-base":8}`)
	_, high := fingerprint(`{"protocol":"classic","expect":"pass","coord-base":254}`)
	if one != plain || oneBounds != plainBounds {
		t.Errorf("coord-base 1 changed the identity (%s, %s) or the bounds (%q, %q)", one, plain, oneBounds, plainBounds)
	}
	if eight == plain || high == plain || eight == high {
		t.Errorf("the bases 1, 8 and 254 share search identities: %s, %s, %s", plain, eight, high)
	}
	if !strings.HasSuffix(eightBounds, " coord-base=8") || strings.Contains(plainBounds, "coord-base") {
		t.Errorf("bounds %q and %q: want coord-base shown when it is not 1", eightBounds, plainBounds)
	}
}
