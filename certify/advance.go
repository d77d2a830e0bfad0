package certify

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// SegmentHeader is the first line of a continuation segment (§11.1 of 003):
// the change data the source committed in (from, to], one log event per line
// in the bundle's event form. Events for keys outside the cut's scope may be
// present (they are skipped: the segment is scope-filtered on reading).
type SegmentHeader struct {
	Format  string `json:"format"` // "cutcheck-segment"
	Version int    `json:"version"`
	From    int64  `json:"from"`
	To      int64  `json:"to"`
}

// advance appends the continuation segment to an accepted cut: σ @ δ is a
// virtual cut at the later frontier (§11.2, §11.4).
func (v *verifier) advance(r io.Reader) (*Failure, error) {
	cont := func(format string, a ...any) *Failure {
		return &Failure{Obligation: "ContSeg", Clause: "continuation segment for (f, f'] (§11.1)", Detail: fmt.Sprintf(format, a...)}
	}
	br := bufio.NewReaderSize(r, 16<<10)
	var h *SegmentHeader
	last := v.f
	lineNo := int64(0)
	for {
		line, err := readLine(br)
		if len(strings.TrimSpace(string(line))) > 0 {
			lineNo++
			if h == nil {
				if err := strictJSON(line, "format", "version", "from", "to"); err != nil {
					return s1(lineNo, "the segment header: %v", err), nil
				}
				dec := json.NewDecoder(strings.NewReader(string(line)))
				dec.DisallowUnknownFields()
				h = new(SegmentHeader)
				if err := dec.Decode(h); err != nil {
					if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
						return unsupported(strings.Trim(name, `"`), "unknown segment header field %s", name), nil
					}
					return cont("the segment header does not decode: %v", err), nil
				}
				if h.Format != SegmentFormat {
					return unsupported("format", "segment format %q is not %q", h.Format, SegmentFormat), nil
				}
				if h.Version != Version {
					return unsupported("version", "segment version %d (this verifier reads version %d)", h.Version, Version), nil
				}
				if h.From != v.f {
					return cont("the segment starts after %d, the cut's frontier is %d", h.From, v.f), nil
				}
				if h.To < h.From {
					return cont("the segment ends at %d, before it starts (%d)", h.To, h.From), nil
				}
			} else if f := v.segmentEvent(line, lineNo, &last, h.To, cont); f != nil {
				return f, nil
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if h == nil {
		return cont("the segment is empty: no header"), nil
	}
	if last != h.To {
		return cont("the segment ends at position %d, short of the frontier %d it claims: every position of (%d, %d] must be listed ({\"p\": n} for one without a row of the scope)", last, h.To, h.From, h.To), nil
	}
	v.f = h.To
	return nil, nil
}

func (v *verifier) segmentEvent(line []byte, lineNo int64, last *int64, to int64, cont func(string, ...any) *Failure) *Failure {
	fs, err := scanObject(line, v.fieldsBuf[:0])
	if err != nil {
		return s1(lineNo, "segment: %v", err)
	}
	v.fieldsBuf = fs
	var kraw, val []byte
	p := int64(-1)
	for _, f := range fs {
		switch f.name {
		case "p":
			if p, err = parseInt(f.raw); err != nil {
				return s1(lineNo, "segment p: %v", err)
			}
		case "k":
			kraw = f.raw
		case "v":
			val = f.raw
		case "x":
		default:
			return unsupported(f.name, "segment line %d: unknown field %q in a log event", lineNo, f.name)
		}
	}
	if p <= *last || p > to {
		return cont("position %d at segment line %d: positions must increase within (%d, %d]", p, lineNo, v.f, to)
	}
	if p != *last+1 {
		// A gap is an event the segment left out, unless told otherwise:
		// ContSeg is exact coverage (§11.1).
		return cont("position %d at segment line %d follows %d: a segment lists every position, without gaps", p, lineNo, *last)
	}
	*last = p
	v.stats.SegmentEvs++
	if kraw != nil && val == nil {
		return unsupported("v", "segment line %d: a row event without a full image (field v)", lineNo)
	}
	var ks *keyState
	var img string
	if kraw != nil {
		k, err := v.kind.parse(kraw)
		if err != nil {
			return s1(lineNo, "%v", err)
		}
		if v.scope.has(k) {
			if ks = v.lookup(k); ks == nil {
				ks = v.keys.alloc()
				*ks = keyState{k: k, unit: -1}
				v.keys.put(ks)
			}
			img = canonValue(val)
		}
	}
	// Where the bundle recorded the log past its frontier, the segment is
	// that log: a segment contradicting it is not the source's.
	if i := p - v.f - 1; i < int64(len(v.tail)) {
		seg := tailEvent{in: ks != nil, img: img}
		if ks != nil {
			seg.k = ks.k
		}
		if b := v.tail[i]; b.in != seg.in || b.k.s != seg.k.s || b.img != img {
			return cont("position %d at segment line %d: the segment has %s, the bundle's own log %s", p, lineNo, showTail(seg), showTail(b))
		}
	}
	if ks != nil {
		ks.out = img
	}
	return nil
}

func showTail(e tailEvent) string {
	if !e.in {
		return "no row of the scope"
	}
	return e.k.String() + " := " + showValue(e.img)
}
