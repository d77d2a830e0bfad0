package explore

// Machine is what the explorer checks: a deterministic state machine with
// named properties. It is the least a model provides; the engine knows
// nothing else about the states it explores. The optional interfaces below
// (Encoder, Decoder, Describer, ActionNamer, Doner, Fielder, Viewer,
// StateConstrainer, ActionConstrainer, Symmetric, Sharder, Graded) add to
// it, each with a default when absent.
//
// Every method must be deterministic and free of side effects: the engine calls
// them from several goroutines at once and re-executes them to rebuild traces.
// Methods here and in the optional interfaces read a state through a pointer
// and must not change it; only Next writes, and only its successor. A state
// is then copied once per successor, not once per call and property: for a
// state of a few hundred bytes those copies had been a third of the time.
type Machine[S, A any] interface {
	// Init returns every initial state, in a fixed order.
	Init() []S
	// Actions appends the actions enabled in s to buf, in a fixed order, and
	// returns the extended slice. The engine reuses buf across calls.
	Actions(s *S, buf []A) []A
	// Next makes the successor of s under a in t, which holds a copy of s
	// on entry: the action changes what it changes, and the rest is
	// unchanged, as in TLA+. It returns false when a is disabled in s: no
	// step, not counted, and not a successor for deadlock (t is then
	// dropped). A stuttering step, which TLC generates and counts, returns
	// true and leaves t as it was: it is counted in Generated and coverage,
	// and t is then a state already seen.
	Next(s *S, a A, t *S) bool
	// Properties lists what is checked and reported, by name.
	Properties() []Property[S, A]
}

// Model is a Machine with its codec, descriptions and action kinds given
// by hand: the whole contract before those parts became optional. Models
// that implement it keep working unchanged; Run takes any Machine.
type Model[S, A any] interface {
	Machine[S, A]
	Codec[S]
	Describer[S, A]
	ActionNamer[A]
}

// Encoder is implemented by models that encode their states by hand.
// Without it, the state type must be a fixed-size value (see Codec).
type Encoder[S any] interface {
	// Encode appends the canonical encoding of s to buf. Two states are the
	// same state exactly when their encodings are equal; the fingerprint is
	// a hash of it.
	Encode(s *S, buf []byte) []byte
}

// Decoder is implemented by models that decode their states by hand.
type Decoder[S any] interface {
	// Decode is the inverse of Encode (states in the queue live as bytes):
	// it fills *s, which is the zero state.
	Decode(b []byte, s *S) error
}

// Codec is an Encoder and a Decoder. A model without one must have a state
// type of fixed size in the sense of encoding/binary (booleans, sized
// integers and floats, and arrays and structs of them with exported
// fields; not int, strings, slices, maps or pointers): the engine then
// encodes states with binary.Append and decodes them with binary.Decode,
// and two states are the same exactly when they are equal (with the usual
// caveat for floating-point NaN and -0). A model with Encode but no Decode
// is fingerprinted with its Encode and queued with that default codec.
//
// When the type's memory already is that encoding (exported fields only,
// no padding between or after them, a little-endian machine), the default
// codec copies the value's bytes, about 5 ns a call. Otherwise it costs
// time: encoding/binary walks a struct by reflection on every call, about
// 0.4 µs to encode and 0.3 µs to decode a 13-byte struct with padding,
// against 10 to 30 ns by hand (BenchmarkCodec). It then suits small runs
// and first drafts; a model meant for large runs should have its own Codec
// or a state without padding.
type Codec[S any] interface {
	Encoder[S]
	Decoder[S]
}

// Describer is implemented by models that render their actions in their
// own words. Without it an action is rendered with fmt's %v.
type Describer[S, A any] interface {
	// Describe renders action a taken in state s as one trace line, in the
	// words of the model's source ("process 2 enters its critical section").
	Describe(s *S, a A) string
}

// ActionNamer is implemented by models that sort their actions into kinds
// for coverage. Without it every action is of one kind, "step".
type ActionNamer[A any] interface {
	// ActionNames lists every kind of action the model has, for coverage.
	ActionNames() []string
	// ActionKind is the index in ActionNames of a's kind.
	ActionKind(a A) int
}

// Doner is implemented by models whose terminal states are expected: a state
// with no successors for which Done is true is not a deadlock.
type Doner[S any] interface {
	Done(s *S) bool
}

// Fielder is implemented by models that can show a state as named fields, so
// traces can print only what changed between two states.
type Fielder[S any] interface {
	Fields(s *S) []Field
}

// Field is one named, already formatted part of a state.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Viewer is implemented by models that can give a state as plain data for
// machine-readable and pictorial traces (encoded with encoding/json).
type Viewer[S any] interface {
	View(s *S) any
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
	Cite string // a reference for the property, e.g. "Lemma 4.3" or "Spec.tla, TypeOK"
	Kind Kind
	// Class says, in the model's own words, what a failure costs (e.g. "final"
	// or "transient"); reports carry it beside the property's name.
	Class string
	// OptIn properties are checked only when Options.With or Options.Only
	// names them: claims that only some users need (e.g. exactly-once
	// delivery), which would otherwise fail runs of designs that never made them.
	OptIn bool
	// Check is used by Always and Sometimes. For Always it returns "" when the
	// property holds, otherwise a one-line reason naming key, expected and actual
	// value. For Sometimes a non-empty result means "reached".
	Check func(s *S) string
	// CheckStep is used by Transition; same convention as Check.
	CheckStep func(s *S, a A, t *S) string
}
