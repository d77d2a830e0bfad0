package explore

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// Every field of Options is either part of the search identity or
// declared not to be: a field added without that decision fails here.
func TestIdentityCoversOptions(t *testing.T) {
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		in, out := slices.Contains(identityOptions, name), slices.Contains(identityExcluded, name)
		switch {
		case name == "Identity":
		case in && out:
			t.Errorf("Options.%s is listed both in and out of the search identity", name)
		case !in && !out:
			t.Errorf("Options.%s: decide whether it belongs in the search identity (SearchIdentity) and list it in identityOptions or identityExcluded", name)
		}
	}
	for _, name := range append(slices.Clone(identityOptions), identityExcluded...) {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("%s is listed but is no field of Options", name)
		}
	}
	// And each included option changes the identity.
	base := Options{}.SearchIdentity().Fingerprint()
	for _, o := range []Options{{NoDeadlock: true}, {MaxDepth: 3}, {Only: []string{"a"}}, {With: []string{"a"}},
		{Shard: Shard{Index: 0, Count: 2}}, {Symmetry: true}, {CheckSymmetry: true}, {Continue: true}, {Simulate: &SimOptions{}}} {
		if o.SearchIdentity().Fingerprint() == base {
			t.Errorf("%+v: same identity as the zero options", o)
		}
	}
	// The shards of one search share its identity.
	if (Options{Shard: Shard{0, 4, 2}}).SearchIdentity().Fingerprint() != (Options{Shard: Shard{3, 4, 2}}).SearchIdentity().Fingerprint() {
		t.Error("two shards of one search have different identities")
	}
}

func TestIdentityDiff(t *testing.T) {
	a := Identity{}.With("protocol", "classic").With("mutation", "")
	b := Identity{}.With("protocol", "classic").With("mutation", "early-release")
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("different identities share a fingerprint")
	}
	err := a.Check("the file", b)
	var me *MismatchError
	if !errors.As(err, &me) || me.Field != "mutation" || me.Here != "" || me.There != "early-release" {
		t.Fatalf("%v", err)
	}
	if err := a.Check("the file", a); err != nil {
		t.Fatal(err)
	}
	if name, _, _, differ := a.Diff(a.With("x", "1")); !differ || name != "x" {
		t.Errorf("a missing field: %q %v", name, differ)
	}
	// Fields are length-prefixed: moving text between name and value
	// changes the fingerprint.
	if (Identity{{"ab", "c"}}).Fingerprint() == (Identity{{"a", "bc"}}).Fingerprint() {
		t.Error("ambiguous fingerprint")
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var back Identity
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, b) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	edited := []byte(`{"fingerprint":"` + b.Fingerprint() + `","fields":[{"name":"protocol","value":"classic"},{"name":"mutation","value":""}]}`)
	if err := json.Unmarshal(edited, &back); err == nil {
		t.Error("an edited field was accepted under the old fingerprint")
	}
	if BuildIdentity() == "" || BuildIdentity() != BuildIdentity() {
		t.Errorf("build identity %q", BuildIdentity())
	}
}
