package protocols_test

import (
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/protocols"
)

// Register refuses a mistake in a user's program with an error naming the
// protocol, and leaves the registry as it was.
func TestRegisterRefuses(t *testing.T) {
	nameless := protocols.Classic(protocols.ClassicParts{})
	nameless.Name = "two words"
	tests := []struct {
		name string
		p    *protocols.Protocol
		want string
	}{
		{"a shipped name", protocols.Classic(protocols.ClassicParts{}), `protocol "classic" is already registered`},
		{"a renamed variant under a shipped name", protocols.Extend(protocols.Classic(protocols.ClassicParts{}), protocols.Extension{Name: "parallel"}), `protocol "parallel" is already registered`},
		{"a bad name", nameless, `bad protocol name "two words"`},
		{"no model", &protocols.Protocol{Name: "no-model"}, `protocol "no-model" has no model`},
	}
	before := len(protocols.All())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := protocols.Register(tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
	if n := len(protocols.All()); n != before {
		t.Errorf("%d protocols registered after the refusals, %d before", n, before)
	}
	if _, err := protocols.Lookup("no-model"); err == nil {
		t.Error("a refused protocol can be looked up")
	}
}
