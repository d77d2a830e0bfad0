// Package specs reads and runs spec files: one small JSON file per run, naming
// a protocol, its bounds, an optional mutation and the expected verdict. The
// repository's specs/*.json are embedded, so an installed cutcheck reproduces
// the paper's runs from any directory. The format is documented in README.md.
package specs

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/invariants"
	"github.com/cutcheck/cutcheck/model"
	"github.com/cutcheck/cutcheck/mutations"
	"github.com/cutcheck/cutcheck/protocols"
)

//go:embed *.json
var embedded embed.FS

// Spec is one run and its expectation.
type Spec struct {
	Name     string   `json:"-"` // file name without .json
	Protocol string   `json:"protocol"`
	Keys     *int     `json:"keys,omitempty"` // omitted bounds take the protocol's defaults
	Values   *int     `json:"values,omitempty"`
	Events   *int     `json:"events,omitempty"`
	Chunks   *int     `json:"chunks,omitempty"`
	Txn      *int     `json:"txn,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	Initial  *Initial `json:"initial,omitempty"` // the store before the history: one value per key (0 = absent), or "any"
	NoOps    bool     `json:"noops,omitempty"`   // the source also commits no-op writes (protocols.Config.NoOps)
	History  []string `json:"history,omitempty"` // the source's first transactions, fixed: one string each, e.g. "k0=1 k1=⊥"
	Onset    *int     `json:"onset,omitempty"`   // with early-common-onset: the one c* claimed, at the run's end (Prop 2)
	// Whole: the log is the whole server's, events outside the scope too (protocols.Config.WholeServer).
	Whole    bool     `json:"whole-server,omitempty"`
	Mutation string   `json:"mutation,omitempty"`
	Sink     string   `json:"sink,omitempty"`     // the sink's merge rule (model.SinkRule by name); omitted: the protocol's
	Expect   string   `json:"expect"`             // "pass", "deadlock", or the invariant that must fail (checked alone)
	Only     []string `json:"only,omitempty"`     // check only these invariants (with an invariant expected, it must be one of them)
	With     []string `json:"with,omitempty"`     // also check these opt-in invariants (e.g. no-duplicate-delivery)
	Reach    bool     `json:"reach,omitempty"`    // every sometimes-property must be reached too
	Quick    bool     `json:"quick,omitempty"`    // part of the quick set (about a minute in all)
	Symmetry bool     `json:"symmetry,omitempty"` // count states up to value renaming (as --symmetry)
	Note     string   `json:"note,omitempty"`     // where the run comes from, e.g. "§10 run 3"
	// CheckSymmetry verifies value renaming on every state (as --check-symmetry).
	CheckSymmetry bool `json:"check-symmetry,omitempty"`
	// CoordBase is the log's first position (protocols.Config.CoordBase); omitted: 1.
	CoordBase *int `json:"coord-base,omitempty"`
}

// Initial is a spec's base store b0: one value per key, or "any" for every
// store over the keys and values (§2.1).
type Initial struct {
	Any    bool
	Values []int
}

// UnmarshalJSON accepts a list of values or the string "any".
func (i *Initial) UnmarshalJSON(b []byte) error {
	var word string
	if json.Unmarshal(b, &word) == nil {
		if word != "any" {
			return fmt.Errorf(`%q is neither "any" nor a list of values`, word)
		}
		*i = Initial{Any: true}
		return nil
	}
	var vs []int
	if err := json.Unmarshal(b, &vs); err != nil {
		return fmt.Errorf(`expected "any" or a list of values, one per key (0 = absent)`)
	}
	*i = Initial{Values: vs}
	return nil
}

// MarshalJSON writes what UnmarshalJSON reads.
func (i Initial) MarshalJSON() ([]byte, error) {
	if i.Any {
		return []byte(`"any"`), nil
	}
	return json.Marshal(i.Values)
}

// Error is a problem with one spec file.
type Error struct {
	File, Field, Problem string
}

// Error is always one line, whatever the file held: a problem quotes what
// it found, and a stray line break is written as \n.
func (e *Error) Error() string {
	msg := e.File + ": " + e.Problem
	if e.Field != "" {
		msg = fmt.Sprintf("%s: field %q: %s", e.File, e.Field, e.Problem)
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(msg)
}

// example is what a spec looks like at least, for messages about files that
// are not one.
const example = `a spec is one JSON object, e.g. {"protocol": "classic", "expect": "pass"}`

// Parse reads one spec file's bytes; file names it in errors. The file must
// be exactly one JSON object whose keys are Spec's field names, spelled as
// documented (encoding/json alone would accept "PROTOCOL" for "protocol"),
// each at most once, with nothing after it; the spec must then resolve
// (see Config).
func Parse(file string, data []byte) (Spec, error) {
	var s Spec
	if err := checkShape(data); err != nil {
		return s, err.at(file)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return s, &Error{file, ute.Field, fmt.Sprintf("expected %s, got %s", ute.Type, ute.Value)}
		}
		return s, &Error{file, "", err.Error()}
	}
	s.Name = strings.TrimSuffix(path.Base(file), ".json")
	if !nameOK(s.Name) {
		return s, &Error{file, "", fmt.Sprintf("the spec's name %q (its file name without .json) names its trace files: use letters, digits, '-', '_' and '.', not first", s.Name)}
	}
	if _, _, err := s.Config(); err != nil {
		return s, err.(*Error).at(file)
	}
	return s, nil
}

// nameOK reports whether a spec's name is safe as a file name in any
// directory: not empty, no separator, no leading dot (so neither "." nor
// "..").
func nameOK(name string) bool {
	if name == "" || name[0] == '.' {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// fieldNames lists the JSON names of Spec's fields, read from its struct
// tags, so that a field added to Spec is known here without further change.
func fieldNames() []string {
	var names []string
	for _, f := range specFields() {
		names = append(names, f.name)
	}
	return names
}

type specField struct {
	name string
	typ  reflect.Type
}

func specFields() []specField {
	var fs []specField
	t := reflect.TypeFor[Spec]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fs = append(fs, specField{name, t.Field(i).Type})
		}
	}
	return fs
}

// decodeField decodes one field's value on its own, so that a value of the
// wrong type is reported with the field's name whatever decodes it.
func decodeField(t reflect.Type, raw []byte) string {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	var ute *json.UnmarshalTypeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ute):
		return fmt.Sprintf("expected %s, got %s", ute.Type, ute.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// checkShape checks what encoding/json lets through: the file is one JSON
// object, its keys are exactly Spec's field names, none is repeated or
// null, and nothing follows the object.
func checkShape(data []byte) *Error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Problem: "empty file; " + example}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	syntax := func(err error) *Error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &Error{Problem: "not valid JSON: the file ends before the spec object does"}
		}
		return &Error{Problem: fmt.Sprintf("not valid JSON at byte %d: %v", dec.InputOffset(), strings.TrimPrefix(err.Error(), "json: "))}
	}
	tok, err := dec.Token()
	if err != nil {
		return syntax(err)
	}
	if tok != json.Delim('{') {
		return &Error{Problem: fmt.Sprintf("found %s; %s", jsonKind(tok), example)}
	}
	fields := fieldNames()
	types := map[string]reflect.Type{}
	for _, f := range specFields() {
		types[f.name] = f.typ
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		key := tok.(string) // inside an object, Token returns keys as strings
		if !slices.Contains(fields, key) {
			for _, f := range fields {
				if strings.EqualFold(f, key) {
					return &Error{Field: key, Problem: fmt.Sprintf("unknown field; field names are case-sensitive: did you mean %q?", f)}
				}
			}
			return &Error{Field: key, Problem: "unknown field (known: " + strings.Join(fields, ", ") + ")"}
		}
		if seen[key] {
			return &Error{Field: key, Problem: "appears twice; give each field once"}
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntax(err)
		}
		if string(raw) == "null" {
			return &Error{Field: key, Problem: "null is not a value; leave the field out to take its default"}
		}
		if problem := decodeField(types[key], raw); problem != "" {
			return &Error{Field: key, Problem: problem}
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntax(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Problem: fmt.Sprintf("unexpected data after the spec object at byte %d; a file holds exactly one spec", end)}
	}
	return nil
}

// jsonKind names the JSON value that starts with tok.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "a JSON array"
		}
	case string:
		return "a JSON string"
	case json.Number:
		return "a JSON number"
	case bool:
		return "a JSON boolean"
	case nil:
		return "JSON null"
	}
	return "JSON " + fmt.Sprint(tok)
}

func (e *Error) at(file string) *Error { e.File = file; return e }

// Config resolves the spec against its protocol: defaults filled in, the
// mutation applied, everything validated.
func (s Spec) Config() (protocols.Config, *protocols.Protocol, error) {
	if s.Protocol == "" {
		return protocols.Config{}, nil, &Error{s.Name, "protocol", "missing"}
	}
	p, err := protocols.Lookup(s.Protocol)
	if err != nil {
		return protocols.Config{}, nil, &Error{s.Name, "protocol", err.Error()}
	}
	cfg := p.Defaults
	for _, b := range []struct {
		v   *int
		dst *int
	}{{s.Keys, &cfg.Keys}, {s.Values, &cfg.Values}, {s.Events, &cfg.Events}, {s.Chunks, &cfg.Chunks}, {s.Txn, &cfg.Txn}} {
		if b.v != nil {
			*b.dst = *b.v
		}
	}
	if s.Mode != "" {
		cfg.Mode = s.Mode
	}
	cfg.NoOps = s.NoOps
	cfg.WholeServer = s.Whole
	if s.Sink != "" {
		r, err := model.LookupSink(s.Sink)
		if err != nil {
			return cfg, p, &Error{s.Name, "sink", err.Error()}
		}
		cfg.Sink = r
	}
	var initial []int
	if s.Initial != nil {
		initial, cfg.InitialAny = s.Initial.Values, s.Initial.Any
	}
	if len(initial) > model.MaxKeys {
		return cfg, p, &Error{s.Name, "initial", fmt.Sprintf("%d values for at most %d keys", len(initial), model.MaxKeys)}
	}
	for k, v := range initial {
		if v < 0 || v > 255 {
			return cfg, p, &Error{s.Name, "initial", fmt.Sprintf("%d is not a value (0 = absent, 1..V)", v)}
		}
		cfg.Initial[k] = model.Value(v)
	}
	if len(s.History) > 0 {
		h, err := protocols.ParseHistory(s.History)
		if err != nil {
			return cfg, p, &Error{s.Name, "history", err.Error()}
		}
		if s.Symmetry {
			return cfg, p, &Error{s.Name, "symmetry", "a fixed history names its values: no value renaming applies to it"}
		}
		cfg.History = h
	}
	if s.CoordBase != nil {
		if *s.CoordBase < 1 || *s.CoordBase > protocols.MaxCoordBase {
			return cfg, p, &Error{s.Name, "coord-base", fmt.Sprintf("%d is not a first position (1..%d)", *s.CoordBase, protocols.MaxCoordBase)}
		}
		cfg.CoordBase = *s.CoordBase
	}
	if s.Onset != nil {
		if *s.Onset < 0 || *s.Onset >= model.MaxLog {
			return cfg, p, &Error{s.Name, "onset", fmt.Sprintf("%d is not a coordinate (0..%d)", *s.Onset, model.MaxLog-1)}
		}
		cfg.Onset = uint8(*s.Onset + 1)
	}
	if s.Mutation != "" {
		m, err := mutations.Lookup(s.Mutation)
		if err != nil {
			return cfg, p, &Error{s.Name, "mutation", err.Error()}
		}
		if !slices.Contains(p.Faults, m.Fault) {
			return cfg, p, &Error{s.Name, "mutation", fmt.Sprintf("%s does not apply to %s (it takes: %s)", m.Name(), p.Name, protocols.FaultList(p.Faults))}
		}
		if err := p.Replaces(m.Fault); err != nil {
			return cfg, p, &Error{s.Name, "mutation", fmt.Sprintf("%s: %v", m.Name(), err)}
		}
		if m.Mode != "" && cfg.Mode != m.Mode {
			return cfg, p, &Error{s.Name, "mode", fmt.Sprintf("mutation %s needs mode %q", m.Name(), m.Mode)}
		}
		cfg.Fault = m.Fault
	}
	if err := p.Validate(cfg); err != nil {
		var ce *protocols.ConfigError
		if errors.As(err, &ce) {
			return cfg, p, &Error{s.Name, ce.Field, ce.Problem}
		}
		return cfg, p, &Error{s.Name, "", err.Error()}
	}
	checked := checkedBy(p, cfg)
	list := strings.Join(checked, ", ")
	for _, name := range s.Only {
		if !slices.Contains(checked, name) {
			return cfg, p, &Error{s.Name, "only", fmt.Sprintf("%s does not check %q under this configuration (it checks: %s)", p.Name, name, list)}
		}
	}
	for _, name := range s.With {
		if !slices.Contains(checked, name) {
			return cfg, p, &Error{s.Name, "with", fmt.Sprintf("%s does not check %q under this configuration (it checks: %s)", p.Name, name, list)}
		}
		if !slices.ContainsFunc(p.Properties(cfg), func(q protocols.Prop) bool { return q.Name == name && q.OptIn }) {
			return cfg, p, &Error{s.Name, "with", fmt.Sprintf("%q is checked without asking (\"with\" adds opt-in invariants only; \"only\" selects)", name)}
		}
	}
	if s.Symmetry && s.CheckSymmetry {
		return cfg, p, &Error{s.Name, "check-symmetry", `explores every concrete state; it cannot be combined with "symmetry"`}
	}
	switch {
	case s.Expect == "":
		return cfg, p, &Error{s.Name, "expect", `missing ("pass", "deadlock" or an invariant name)`}
	case s.Expect == "pass" || s.Expect == "deadlock":
	case slices.Contains(checked, s.Expect):
		if len(s.Only) > 0 && !slices.Contains(s.Only, s.Expect) {
			return cfg, p, &Error{s.Name, "expect", fmt.Sprintf("%q must fail, but \"only\" leaves it unchecked", s.Expect)}
		}
	case slices.ContainsFunc(invariants.All, func(inv invariants.Invariant) bool { return inv.Name == s.Expect }):
		return cfg, p, &Error{s.Name, "expect", fmt.Sprintf("%s does not check %q under this configuration; expect pass, deadlock or one of: %s", p.Name, s.Expect, list)}
	default:
		return cfg, p, &Error{s.Name, "expect", fmt.Sprintf("%q is not pass, deadlock or an invariant %s checks (%s)", s.Expect, p.Name, list)}
	}
	return cfg, p, nil
}

// checkedBy lists the always and transition properties p checks under cfg:
// the names a spec may expect to fail or select with "only".
func checkedBy(p *protocols.Protocol, cfg protocols.Config) []string {
	var names []string
	for _, q := range p.Properties(cfg) {
		if q.Kind != explore.Sometimes {
			names = append(names, q.Name)
		}
	}
	return names
}

// Load reads every *.json in fsys, sorted by name, and validates them all
// before any is run; a directory without spec files is an error too.
func Load(fsys fs.FS) ([]Spec, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no spec files (*.json) there")
	}
	sort.Strings(names)
	var out []Spec
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		s, err := Parse(n, data)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Embedded returns the specs built into the binary.
func Embedded() ([]Spec, error) { return Load(embedded) }

// Outcome is a spec's run: what was expected, what came out.
type Outcome struct {
	Spec    Spec
	Config  protocols.Config
	Report  explore.Report
	Got     string // "pass", "incomplete", or the failed property ("deadlock" included)
	OK      bool   // Got matches Expect (and every sometimes was reached, if Reach)
	Why     string // when not OK: what differs
	Elapsed time.Duration
	// Identity is the search's (Spec.Identity).
	Identity explore.Identity
}

// Run checks one spec.
func Run(ctx context.Context, s Spec, opts explore.Options) (Outcome, error) {
	cfg, p, err := s.Config()
	if err != nil {
		return Outcome{}, err
	}
	opts = Identify(p, cfg, s.Options(opts))
	start := time.Now()
	rep, err := p.Check(ctx, cfg, opts)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	o := Outcome{Spec: s, Config: cfg, Report: rep, Elapsed: time.Since(start), Identity: opts.SearchIdentity()}
	o.Got, o.OK, o.Why = s.Judge(rep)
	return o, nil
}

// Options returns opts as Run uses them for s: its own selection of
// invariants, or, for a spec expecting an invariant to fail, that one alone,
// and the symmetry or its check if the spec or opts asks for it.
func (s Spec) Options(opts explore.Options) explore.Options {
	opts.With = s.With
	opts.Symmetry = opts.Symmetry || s.Symmetry
	opts.CheckSymmetry = opts.CheckSymmetry || s.CheckSymmetry
	switch {
	case len(s.Only) > 0:
		opts.Only = s.Only
	case s.Expect != "pass" && s.Expect != "deadlock":
		// "expect: X" claims X fails: check X alone, so its own shortest
		// counterexample is the one reported (the kill matrix shows the rest).
		opts.Only = []string{s.Expect}
	}
	return opts
}

// Judge compares a run's report with the spec's expectation: what came out
// ("pass", "incomplete" or the failed property), whether that is what was
// expected (with every sometimes-property reached, if Reach), and if not, why.
func (s Spec) Judge(rep explore.Report) (got string, ok bool, why string) {
	switch rep.Verdict {
	case explore.Pass:
		got = "pass"
	case explore.Violated:
		got = rep.Violation.Property
	default:
		got = "incomplete"
	}
	if got != s.Expect {
		return got, false, fmt.Sprintf("expected %s, got %s", s.Expect, got)
	}
	if s.Reach {
		for _, r := range rep.Sometimes {
			if !r.Reached {
				return got, false, "sometimes-property " + r.Name + " never reached"
			}
		}
	}
	return got, true, ""
}
