package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Format and Version name the evidence-bundle format this package reads.
const (
	Format        = "cutcheck-evidence"
	SegmentFormat = "cutcheck-segment"
	Version       = 1
)

// Disciplines the verifier knows (§6.2–§6.4 of the main paper).
const (
	WindowDiscard = "window-discard"
	RangeMerge    = "range-merge"
	PointSplice   = "point-splice"
)

// Header is the bundle's first line: what the run claims and how its
// evidence is written. Every other line is a record (see FORMAT.md).
type Header struct {
	Format      string `json:"format"`      // "cutcheck-evidence"
	Version     int    `json:"version"`     // 1
	Coordinates string `json:"coordinates"` // "position" or "executed-set"
	Keys        string `json:"keys"`        // "string" or "integer"
	Base        string `json:"base"`        // "complete" or "from-reads"
	Discipline  string `json:"discipline"`  // window-discard, range-merge or point-splice
	// Reads is "all" (the default: every read result is recorded) or
	// "survivors" (window-discard only: the reads a window event discarded
	// are not recorded; their refreshes are dominated by newer same-key log
	// evidence and suppressed from the clean prefix, 003 §5.4).
	Reads string `json:"reads,omitempty"`

	Certificate Certificate `json:"certificate"`
	Run         Run         `json:"run"`
	Units       []UnitSpec  `json:"units"`
}

// Certificate is the claim object (§8.1 of 003): scope, frontier and the
// certified replay prefix, which is the emitted stream the bundle records;
// PrefixEntries, when given, binds the certificate to that stream's length.
type Certificate struct {
	Scope         ScopeSpec `json:"scope"`
	Frontier      int64     `json:"frontier"`
	PrefixEntries *int64    `json:"prefix_entries,omitempty"`
}

// Run is what the recorded run says of itself: the key scope its chunk plan
// covers, the consumption start s0 and how far the consumer got (its frontier).
type Run struct {
	Scope    ScopeSpec `json:"scope"`
	Start    int64     `json:"start"`
	Consumed int64     `json:"consumed"`
}

// UnitSpec is one chunk of the plan: its domain and its bracket, as positions
// (lo, hi) or, for executed-set sources, as two samples of the executed
// transaction set (low, high), each a list of [first, last] label intervals.
type UnitSpec struct {
	Domain ScopeSpec  `json:"domain"`
	Lo     *int64     `json:"lo,omitempty"`
	Hi     *int64     `json:"hi,omitempty"`
	Low    [][2]int64 `json:"low,omitzero"` // [] is the empty sample, G(0)
	High   [][2]int64 `json:"high,omitzero"`
}

// Verdict is the verifier's answer (§8.5 of 003).
type Verdict uint8

const (
	Accept      Verdict = iota // the evidence materializes a wellformed run agreeing with the certificate
	Reject                     // some obligation fails; Failure names the first
	Unsupported                // the bundle holds evidence the verifier cannot interpret
)

func (v Verdict) String() string {
	switch v {
	case Accept:
		return "Accept"
	case Reject:
		return "Reject"
	case Unsupported:
		return "Unsupported"
	}
	return "Verdict?"
}

// MarshalText writes the verdict's name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Failure names the first obligation that fails, with its witness.
type Failure struct {
	Obligation string `json:"obligation"` // "S1", "S2", "S3", "S4" or "VC"
	Clause     string `json:"clause"`     // the paper's name of the clause, e.g. "O2 bracket-local validity"
	Key        string `json:"key,omitempty"`
	Unit       int    `json:"unit,omitempty"`  // 1-based; 0 when no unit is at fault
	Coord      *int64 `json:"coord,omitempty"` // the coordinate the witness is about
	Expected   string `json:"expected,omitempty"`
	Observed   string `json:"observed,omitempty"`
	Detail     string `json:"detail"`
	Field      string `json:"field,omitempty"` // for Unsupported: the field or feature not understood
	Line       int64  `json:"line,omitempty"`  // bundle line, when the failure is about one record
}

func (f *Failure) String() string {
	var b strings.Builder
	b.WriteString(f.Obligation)
	if f.Clause != "" {
		b.WriteString(" (" + f.Clause + ")")
	}
	b.WriteString(": ")
	b.WriteString(f.Detail)
	var w []string
	if f.Unit > 0 {
		w = append(w, fmt.Sprintf("unit %d", f.Unit))
	}
	if f.Key != "" {
		w = append(w, "key "+f.Key)
	}
	if f.Coord != nil {
		w = append(w, fmt.Sprintf("coordinate %d", *f.Coord))
	}
	if f.Expected != "" || f.Observed != "" {
		w = append(w, "expected "+f.Expected, "observed "+f.Observed)
	}
	if f.Field != "" {
		w = append(w, "field "+f.Field)
	}
	if f.Line > 0 {
		w = append(w, fmt.Sprintf("line %d", f.Line))
	}
	if len(w) > 0 {
		b.WriteString(" [" + strings.Join(w, "; ") + "]")
	}
	return b.String()
}

// Stats count what was read.
type Stats struct {
	Lines      int64 `json:"lines"`
	Events     int64 `json:"events"`     // log events
	Entries    int64 `json:"entries"`    // emitted entries
	Reads      int64 `json:"reads"`      // observed rows and absences
	Units      int   `json:"units"`      // chunks of the plan
	ScopeKeys  int   `json:"scope_keys"` // keys of the scope the evidence mentions
	SegmentEvs int64 `json:"segment_events,omitempty"`
	Spills     int64 `json:"spills,omitempty"` // times states or the backlog went to disk (Options.Mem)
	Parts      int   `json:"parts,omitempty"`  // parts the keys were verified in, past the budget (Options.Mem)
}

// Cut is the certified virtual cut: apply(prefix) restricted to the scope
// equals src(b0, H, frontier) there. State holds the present keys (absent
// ones are omitted); Digest is the SHA-256 of "key\tvalue\n" lines in key
// order, so two cuts can be compared without printing them.
type Cut struct {
	Scope    string `json:"scope"`
	Frontier int64  `json:"frontier"`
	Present  int    `json:"present"`
	Digest   string `json:"digest"`
	// Omitted is, under Options.Require, the required keys the scope
	// leaves out ("" when it covers them all).
	Omitted string            `json:"omitted,omitempty"`
	State   map[string]string `json:"-"`
}

// Result is the verifier's whole answer.
type Result struct {
	Verdict Verdict  `json:"verdict"`
	Failure *Failure `json:"failure,omitempty"`
	Cut     *Cut     `json:"cut,omitempty"` // on Accept
	// Assumes names what an Accept rests on beyond the bundle: the
	// assumptions the verifier cannot check (003 §8.7: an accepted
	// certificate is a virtual cut under faithful source observation).
	Assumes []string `json:"assumes,omitempty"`
	// Full is, under Options.Restrict, the verdict on the whole
	// certificate: an Accept on K' says nothing of the rest of scope(C).
	Full *Result `json:"full,omitempty"`
	// From is, under Options.Segment, the frontier of the certificate the
	// cut was advanced from.
	From  *int64 `json:"advanced_from,omitempty"`
	Stats Stats  `json:"stats"`
}

// Line is the one-line verdict the CLI prints.
func (r *Result) Line() string {
	switch {
	case r.Verdict == Accept && r.Cut != nil:
		s := fmt.Sprintf("Accept: virtual cut at frontier %d on scope %s (%d keys present, digest %.16s)", r.Cut.Frontier, r.Cut.Scope, r.Cut.Present, r.Cut.Digest)
		if r.From != nil {
			s += fmt.Sprintf(", advanced from the certified frontier %d by the segment", *r.From)
		}
		if r.Full != nil {
			if r.Full.Verdict == Accept {
				s += "; the full certificate is accepted too"
			} else {
				s += "; this is the sub-scope only: the full certificate is " + r.Full.Line()
			}
		}
		if r.Cut.Omitted != "" {
			s += "; narrower than the required scope: " + r.Cut.Omitted + " is not certified"
		}
		if len(r.Assumes) > 0 {
			s += "; rests on: " + strings.Join(r.Assumes, "; ")
		}
		return s
	case r.Failure != nil && r.Failure.Obligation == r.Verdict.String():
		return r.Failure.String() // "Unsupported" names itself
	case r.Failure != nil:
		return r.Verdict.String() + ": " + r.Failure.String()
	}
	return r.Verdict.String()
}

// headerNames are the member names of the header and its parts.
var headerNames = []string{"format", "version", "coordinates", "keys", "base", "discipline", "reads",
	"certificate", "run", "units", "scope", "frontier", "prefix_entries", "start", "consumed",
	"domain", "lo", "hi", "low", "high", "ranges", "ge", "gt", "lt", "le"}

// parseHeader decodes the first line; unknown fields are Unsupported.
func parseHeader(line []byte) (*Header, *Failure) {
	if err := strictJSON(line, headerNames...); err != nil {
		return nil, s1(1, "the header: %v", err)
	}
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, s1(1, "the header is not a JSON object: %v", err)
	}
	if probe.Format != Format {
		return nil, unsupported("format", "format %q is not %q", probe.Format, Format)
	}
	if probe.Version != Version {
		return nil, unsupported("version", "version %d (this verifier reads version %d)", probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var h Header
	if err := dec.Decode(&h); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, unsupported(strings.Trim(name, `"`), "unknown header field %s", name)
		}
		return nil, s1(1, "the header does not decode: %v", err)
	}
	switch h.Coordinates {
	case "position", "executed-set":
	default:
		return nil, unsupported("coordinates", "unknown coordinate kind %q", h.Coordinates)
	}
	switch h.Keys {
	case "string", "integer":
	default:
		return nil, unsupported("keys", "unknown key kind %q", h.Keys)
	}
	switch h.Base {
	case "complete", "from-reads":
	default:
		return nil, unsupported("base", "unknown base kind %q", h.Base)
	}
	switch h.Discipline {
	case WindowDiscard, RangeMerge, PointSplice:
	default:
		return nil, unsupported("discipline", "unknown discipline %q", h.Discipline)
	}
	switch h.Reads {
	case "", "all":
	case "survivors":
		if h.Discipline != WindowDiscard {
			return nil, unsupported("reads", "survivor-only reads are defined for window-discard only")
		}
	default:
		return nil, unsupported("reads", "unknown read-evidence kind %q", h.Reads)
	}
	return &h, nil
}

func unsupported(field, format string, a ...any) *Failure {
	return &Failure{Obligation: "Unsupported", Field: field, Detail: fmt.Sprintf(format, a...)}
}

func s1(line int64, format string, a ...any) *Failure {
	return &Failure{Obligation: "S1", Clause: "input wellformedness", Line: line, Detail: fmt.Sprintf(format, a...)}
}

func coord(c int64) *int64 { return &c }
