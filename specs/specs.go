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
	"io/fs"
	"path"
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
	Mutation string   `json:"mutation,omitempty"`
	Expect   string   `json:"expect"`          // "pass", "deadlock", or the invariant that must fail (checked alone)
	Reach    bool     `json:"reach,omitempty"` // every sometimes-property must be reached too
	Quick    bool     `json:"quick,omitempty"` // part of the quick set (about a minute in all)
	Note     string   `json:"note,omitempty"`  // where the run comes from, e.g. "§10 run 3"
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

func (e *Error) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Problem
	}
	return fmt.Sprintf("%s: field %q: %s", e.File, e.Field, e.Problem)
}

// Parse reads one spec file's bytes; file names it in errors.
func Parse(file string, data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var ute *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &ute):
			return s, &Error{file, ute.Field, fmt.Sprintf("expected %s, got %s", ute.Type, ute.Value)}
		case errors.As(err, &se):
			return s, &Error{file, "", fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, err)}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return s, &Error{file, f, "unknown field (known: protocol, keys, values, events, chunks, txn, mode, initial, mutation, expect, reach, quick, note)"}
		default:
			return s, &Error{file, "", err.Error()}
		}
	}
	s.Name = strings.TrimSuffix(path.Base(file), ".json")
	if _, _, err := s.Config(); err != nil {
		return s, err.(*Error).at(file)
	}
	return s, nil
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
	if s.Mutation != "" {
		m, err := mutations.Lookup(s.Mutation)
		if err != nil {
			return cfg, p, &Error{s.Name, "mutation", err.Error()}
		}
		if !m.AppliesTo(p.Name) {
			return cfg, p, &Error{s.Name, "mutation", fmt.Sprintf("%s does not apply to %s (applies to %s)", m.Name(), p.Name, strings.Join(m.Protocols, ", "))}
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
	switch {
	case s.Expect == "":
		return cfg, p, &Error{s.Name, "expect", `missing ("pass", "deadlock" or an invariant name)`}
	case s.Expect == "pass" || s.Expect == "deadlock":
	default:
		known := false
		for _, inv := range invariants.All {
			known = known || inv.Name == s.Expect
		}
		if !known {
			return cfg, p, &Error{s.Name, "expect", fmt.Sprintf("%q is not pass, deadlock or an invariant name", s.Expect)}
		}
	}
	return cfg, p, nil
}

// Load reads every *.json in fsys, sorted by name.
func Load(fsys fs.FS) ([]Spec, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Spec
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
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
}

// Run checks one spec.
func Run(ctx context.Context, s Spec, opts explore.Options) (Outcome, error) {
	cfg, p, err := s.Config()
	if err != nil {
		return Outcome{}, err
	}
	// "expect: X" claims X fails: check X alone, so its own shortest
	// counterexample is the one reported (the kill matrix shows the rest).
	opts = s.Options(opts)
	start := time.Now()
	rep, err := p.Check(ctx, cfg, opts)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	o := Outcome{Spec: s, Config: cfg, Report: rep, Elapsed: time.Since(start)}
	o.Got, o.OK, o.Why = s.Judge(rep)
	return o, nil
}

// Options returns opts as Run uses them for s: a spec expecting an
// invariant to fail checks that invariant alone.
func (s Spec) Options(opts explore.Options) explore.Options {
	if s.Expect != "pass" && s.Expect != "deadlock" {
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
