package explore

// Model is what the explorer checks: a deterministic state machine with named
// properties. It is the whole contract between a model and the engine; the engine
// knows nothing else about the states it explores.
//
// Every method must be deterministic and free of side effects: the engine calls
// them from several goroutines at once and re-executes them to rebuild traces.
type Model[S, A any] interface {
	// Init returns every initial state, in a fixed order.
	Init() []S
	// Actions appends the actions enabled in s to buf, in a fixed order, and
	// returns the extended slice. The engine reuses buf across calls.
	Actions(s S, buf []A) []A
	// Next returns the successor of s under a. ok=false means a is disabled
	// in s: no step, not counted, and not a successor for deadlock. A
	// stuttering step, which TLC generates and counts, is ok=true with t
	// equal to s: it is counted in Generated and coverage, and t is then a
	// state already seen.
	Next(s S, a A) (t S, ok bool)
	// Encode appends the canonical encoding of s to buf. Two states are the same
	// state exactly when their encodings are equal; the fingerprint is a hash of it.
	Encode(s S, buf []byte) []byte
	// Decode is the inverse of Encode (states in a spilled queue live as bytes).
	Decode(b []byte) (S, error)
	// Properties lists what is checked and reported, by name.
	Properties() []Property[S, A]
	// Describe renders action a taken in state s as one trace line, in the
	// words of the model's source ("read chunk 1 at position 3").
	Describe(s S, a A) string
	// ActionNames lists every kind of action the model has, for coverage.
	ActionNames() []string
	// ActionKind is the index in ActionNames of a's kind.
	ActionKind(a A) int
}

// Doner is implemented by models whose terminal states are expected: a state
// with no successors for which Done is true is not a deadlock.
type Doner[S any] interface {
	Done(s S) bool
}

// Fielder is implemented by models that can show a state as named fields, so
// traces can print only what changed between two states.
type Fielder[S any] interface {
	Fields(s S) []Field
}

// Field is one named, already formatted part of a state.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Viewer is implemented by models that can give a state as plain data for
// machine-readable and pictorial traces (encoded with encoding/json).
type Viewer[S any] interface {
	View(s S) any
}

// Kind says how a property is judged.
type Kind uint8

const (
	// Always holds in every reachable state (a safety invariant).
	Always Kind = iota
	// Transition holds on every step s -a-> t (e.g. per-key monotonicity).
	Transition
	// Sometimes holds in at least one reachable state; it is reported as
	// reached or not, never a violation (non-vacuity).
	Sometimes
)

func (k Kind) String() string {
	switch k {
	case Always:
		return "always"
	case Transition:
		return "transition"
	case Sometimes:
		return "sometimes"
	}
	return "kind?"
}

// Property is a named predicate over states or steps.
type Property[S, A any] struct {
	Name string // kebab-case, e.g. "closed-unit-cut"
	Cite string // the paper's claim it checks, e.g. "Lemma 4.3"
	Kind Kind
	// Check is used by Always and Sometimes. For Always it returns "" when the
	// property holds, otherwise a one-line reason naming key, expected and actual
	// value. For Sometimes a non-empty result means "reached".
	Check func(s S) string
	// CheckStep is used by Transition; same convention as Check.
	CheckStep func(s S, a A, t S) string
}
