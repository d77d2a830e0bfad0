package explore

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Identity names a search: everything that decides its state graph and
// its verdict, as ordered named fields. Every file a later run reads back
// (a checkpoint, a shard's result) carries the identity of the search that
// wrote it, and is refused by a search of another identity, naming the
// first field that differs. The caller (the command line) gives the fields
// of its domain in Options.Identity; SearchIdentity adds the options the
// engine knows.
type Identity []IdentityField

// IdentityField is one named part of an Identity.
type IdentityField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// With returns id with one more field.
func (id Identity) With(name, value string) Identity {
	return append(id[:len(id):len(id)], IdentityField{name, value})
}

// Get returns the value of the named field and whether there is one.
func (id Identity) Get(name string) (string, bool) {
	for _, f := range id {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// Without returns id without the named fields.
func (id Identity) Without(names ...string) Identity {
	var out Identity
	for _, f := range id {
		drop := false
		for _, n := range names {
			drop = drop || f.Name == n
		}
		if !drop {
			out = append(out, f)
		}
	}
	return out
}

// Fingerprint is one 64-bit hash of every field, in hex.
func (id Identity) Fingerprint() string {
	h := xxhash.New()
	for _, f := range id {
		fmt.Fprintf(h, "%d:%s=%d:%s\n", len(f.Name), f.Name, len(f.Value), f.Value)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Diff names the first field in which id and other differ, with its value
// in each ("" and ok false when they are the same). A field only one of
// them has differs too.
func (id Identity) Diff(other Identity) (name, mine, theirs string, differ bool) {
	for i := range max(len(id), len(other)) {
		switch {
		case i >= len(id):
			return other[i].Name, "(none)", other[i].Value, true
		case i >= len(other):
			return id[i].Name, id[i].Value, "(none)", true
		case id[i].Name != other[i].Name:
			return id[i].Name, id[i].Value, "(none)", true
		case id[i].Value != other[i].Value:
			return id[i].Name, id[i].Value, other[i].Value, true
		}
	}
	return "", "", "", false
}

// MismatchError is a file of another search refused: the first field
// that differs, with its value in this search and in the file's.
type MismatchError struct {
	What        string // the file, e.g. "the checkpoint in DIR"
	Field       string
	Here, There string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s is of another search: %s is %q there, %q here", e.What, e.Field, e.There, e.Here)
}

// Check returns a *MismatchError naming the first field in which the
// identity of a file (what) differs from id, or nil.
func (id Identity) Check(what string, file Identity) error {
	if name, here, there, differ := id.Diff(file); differ {
		return &MismatchError{What: what, Field: name, Here: here, There: there}
	}
	return nil
}

// String lists the fields as name=value, separated by spaces.
func (id Identity) String() string {
	var parts []string
	for _, f := range id {
		parts = append(parts, f.Name+"="+f.Value)
	}
	return strings.Join(parts, " ")
}

// identityJSON is an Identity as written: its fingerprint, then its fields.
type identityJSON struct {
	Fingerprint string          `json:"fingerprint"`
	Fields      []IdentityField `json:"fields"`
}

// MarshalJSON writes the fingerprint with the fields.
func (id Identity) MarshalJSON() ([]byte, error) {
	return json.Marshal(identityJSON{id.Fingerprint(), []IdentityField(id)})
}

// UnmarshalJSON reads what MarshalJSON writes, refusing a fingerprint that
// does not match the fields.
func (id *Identity) UnmarshalJSON(b []byte) error {
	var j identityJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*id = j.Fields
	if got := id.Fingerprint(); got != j.Fingerprint {
		return fmt.Errorf("identity fingerprint %s does not match its fields (%s)", j.Fingerprint, got)
	}
	return nil
}

// identityOptions are the Options that go into SearchIdentity (beside
// Identity itself); identityExcluded are those that do not, because they
// change how a search runs, never what it finds. A test holds every field
// of Options to one of the lists.
var (
	identityOptions  = []string{"NoDeadlock", "MaxDepth", "Only", "With", "Shard", "Symmetry", "CheckSymmetry", "Continue", "Simulate"}
	identityExcluded = []string{"Workers", "MemBudget", "Dir", "ForceDisk", "Progress", "OnProgress", "NoGrade", "Checkpoint", "OnResume"}
)

// MaxDepthField is the identity field of Options.MaxDepth: a checkpoint
// may be continued under another depth limit (it changes where a search
// stops, not the states it finds up to there).
const MaxDepthField = "max-depth"

// SearchIdentity is o.Identity with the fields of the options the engine
// knows: deadlock checking, the depth limit, the properties selected,
// symmetry, the shard split (not the shard's index: the shards of one
// search share its identity) and a simulation's settings.
func (o Options) SearchIdentity() Identity {
	id := o.Identity.
		With("deadlock", fmt.Sprint(!o.NoDeadlock)).
		With(MaxDepthField, fmt.Sprint(o.MaxDepth)).
		With("only", strings.Join(o.Only, ",")).
		With("with", strings.Join(o.With, ",")).
		With("symmetry", fmt.Sprint(o.Symmetry))
	shard := "none"
	if o.Shard.Count > 0 {
		shard = fmt.Sprintf("%d parts, depth %d", o.Shard.Count, o.Shard.Depth)
		if o.Shard.Depth == AutoDepth {
			// The depth chosen is a function of the model and the count.
			shard = fmt.Sprintf("%d parts, depth auto", o.Shard.Count)
		}
	}
	id = id.With("shard", shard)
	if o.Continue {
		// Every property, opt-in ones too, each with its own counterexample.
		id = id.With("continue", "true")
	}
	if o.CheckSymmetry {
		// The check adds a way to fail: a broken symmetry stops the run.
		id = id.With("check-symmetry", "true")
	}
	if s := o.Simulate; s != nil {
		id = id.With("simulate", fmt.Sprintf("seed %d depth %d walks %d duration %v", s.Seed, s.Depth, s.Walks, s.Duration))
	}
	return id
}

var (
	buildOnce sync.Once
	buildID   string
)

// BuildIdentity names the program that runs: its module version and VCS
// revision when the build recorded them (go build in a clean checkout),
// otherwise a hash of the executable (go test, go run, a modified
// checkout), so that two different programs never share an identity.
func BuildIdentity() string {
	buildOnce.Do(func() { buildID = buildIdentity() })
	return buildID
}

func buildIdentity() string {
	var version, revision string
	modified := true
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Path + "@" + bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if revision != "" && !modified {
		return version + " rev " + revision
	}
	if sum, err := executableHash(); err == nil {
		return version + " exe " + sum
	}
	// Nothing tells this program apart: an identity no other run shares,
	// so that nothing it writes is read back as another program's.
	return fmt.Sprintf("%s unidentified pid %d", version, os.Getpid())
}

func executableHash() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxhash.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%016x", h.Sum64()), nil
}
