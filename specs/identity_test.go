package specs

import (
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// The source's options are part of the search identity: a checkpoint or a
// shard result of a search with no-op writes or a whole-server log is not
// one of the same bounds without them, so neither is read back for the other.
func TestIdentitySourceOptions(t *testing.T) {
	base := Spec{Name: "x", Protocol: "classic", Expect: "pass"}
	id := func(s Spec) string {
		i, err := s.Identity(explore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return i.Fingerprint()
	}
	noops, whole := base, base
	noops.NoOps, whole.Whole = true, true
	seen := map[string]string{}
	for name, s := range map[string]Spec{"plain": base, "noops": noops, "whole-server": whole} {
		f := id(s)
		if other, ok := seen[f]; ok {
			t.Errorf("%s and %s share the search identity %s", name, other, f)
		}
		seen[f] = name
	}
}
