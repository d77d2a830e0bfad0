package certify

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/cutcheck/cutcheck/model"
)

// ModelRun is a capture of the model package written out as evidence: the
// log, the plan (its units' domains, brackets and reads), the consumption
// start and frontier, the discipline and the stream it emitted. It lets the
// verifier be checked against the model checker's own semantics.
type ModelRun struct {
	Log        *model.Log
	Plan       *model.Plan // Plan.Keys is the scope {0..Keys-1}
	Start      model.Coord
	Frontier   model.Coord
	Discipline string
	Stream     model.Stream
	// Ranges writes the scope and domains as key ranges (a range read is
	// total: unread keys were observed absent) instead of key lists.
	Ranges bool
	// ExecutedSet writes brackets as executed-set samples G(lo), G(hi) of
	// the log's transaction labels instead of positions (§7.4).
	ExecutedSet bool
}

// WriteModelBundle writes r as a position-coordinate bundle with integer
// keys 0..K-1, integer values (⊥ as null), a complete base (the log's
// initial store) and key-list domains; each emitted entry follows the log
// event its tag names.
func WriteModelBundle(w io.Writer, r ModelRun) error {
	bw := bufio.NewWriter(w)
	p := r.Plan
	var scope ScopeSpec
	scope.Keys = []json.RawMessage{}
	for k := 0; k < int(p.Keys); k++ {
		scope.Keys = append(scope.Keys, json.RawMessage(strconv.Itoa(k)))
	}
	if r.Ranges {
		scope = ScopeSpec{Ranges: []RangeSpec{{Ge: json.RawMessage("0"), Lt: json.RawMessage(strconv.Itoa(int(p.Keys)))}}}
	}
	coords := "position"
	if r.ExecutedSet {
		coords = "executed-set"
	}
	n := int64(len(r.Stream))
	h := Header{Format: Format, Version: Version, Coordinates: coords, Keys: "integer", Base: "complete",
		Discipline:  r.Discipline,
		Certificate: Certificate{Scope: scope, Frontier: int64(r.Frontier), PrefixEntries: &n},
		Run:         Run{Scope: scope, Start: int64(r.Start), Consumed: int64(r.Frontier)},
	}
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		var d ScopeSpec
		d.Keys = []json.RawMessage{}
		for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
			if u.Domain.Has(k) {
				d.Keys = append(d.Keys, json.RawMessage(strconv.Itoa(int(k))))
			}
		}
		if r.Ranges {
			d = ScopeSpec{Ranges: []RangeSpec{}}
			for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
				if u.Domain.Has(k) {
					d.Ranges = append(d.Ranges, RangeSpec{Ge: json.RawMessage(strconv.Itoa(int(k))), Lt: json.RawMessage(strconv.Itoa(int(k) + 1))})
				}
			}
		}
		lo, hi := int64(u.Lo), int64(u.Hi)
		if r.ExecutedSet {
			h.Units = append(h.Units, UnitSpec{Domain: d, Low: executedSample(r.Log, u.Lo), High: executedSample(r.Log, u.Hi)})
			continue
		}
		h.Units = append(h.Units, UnitSpec{Domain: d, Lo: &lo, Hi: &hi})
	}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw.Write(head)
	bw.WriteByte('\n')
	for k := model.Key(0); k < model.Key(p.Keys); k++ {
		if v := r.Log.Init[k]; v != model.Absent {
			bw.WriteString(`{"base":` + strconv.Itoa(int(k)) + `,"v":` + modelValue(v) + "}\n")
		}
	}
	for i := 0; i < int(p.N); i++ {
		u := &p.Units[i]
		for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
			if u.Domain.Has(k) && u.Read.Has(k) {
				bw.WriteString(`{"read":` + strconv.Itoa(i+1) + `,"k":` + strconv.Itoa(int(k)) + `,"v":` + modelValue(u.Refresh[k]) + "}\n")
			}
		}
	}
	written := model.Coord(0)
	logTo := func(c model.Coord) {
		for ; written < c && written < r.Log.Len(); written++ {
			e := r.Log.At(written + 1)
			pos := strconv.Itoa(int(written) + 1)
			if e.Key == model.NoKey {
				bw.WriteString(`{"p":` + pos + `,"x":` + strconv.Itoa(int(e.Txn)) + "}\n")
				continue
			}
			bw.WriteString(`{"p":` + pos + `,"k":` + strconv.Itoa(int(e.Key)) + `,"v":` + modelValue(e.Img) + `,"x":` + strconv.Itoa(int(e.Txn)) + "}\n")
		}
	}
	for _, e := range r.Stream {
		logTo(e.Tag)
		bw.WriteString(`{"out":` + strconv.Itoa(int(e.Key)) + `,"v":` + modelValue(e.Val) + `,"tag":` + strconv.Itoa(int(e.Tag)) + "}\n")
	}
	logTo(r.Log.Len())
	return bw.Flush()
}

func modelValue(v model.Value) string {
	if v == model.Absent {
		return "null"
	}
	return strconv.Itoa(int(v))
}

// WriteModelSegment writes the continuation segment (from, to] of a model
// log (§11.1 of 003): every event in the interval, markers included.
func WriteModelSegment(w io.Writer, l *model.Log, from, to model.Coord) error {
	bw := bufio.NewWriter(w)
	head, err := json.Marshal(SegmentHeader{Format: SegmentFormat, Version: Version, From: int64(from), To: int64(to)})
	if err != nil {
		return err
	}
	bw.Write(head)
	bw.WriteByte('\n')
	for p := from + 1; p <= to && p <= l.Len(); p++ {
		e := l.At(p)
		if e.Key == model.NoKey {
			bw.WriteString(`{"p":` + strconv.Itoa(int(p)) + "}\n")
			continue
		}
		bw.WriteString(`{"p":` + strconv.Itoa(int(p)) + `,"k":` + strconv.Itoa(int(e.Key)) + `,"v":` + modelValue(e.Img) + "}\n")
	}
	return bw.Flush()
}

// executedSample is G(c) as label intervals; past the log's end it names
// labels the log never executes (the sample then denotes no prefix).
func executedSample(l *model.Log, c model.Coord) [][2]int64 {
	var out [][2]int64
	add := func(t int64) {
		if n := len(out); n > 0 && out[n-1][1]+1 >= t {
			out[n-1][1] = max(out[n-1][1], t)
			return
		}
		out = append(out, [2]int64{t, t})
	}
	for p := model.Coord(1); p <= c; p++ {
		if p <= l.Len() {
			add(int64(l.At(p).Txn))
		} else {
			add(int64(l.Txns()) + int64(p-l.Len()))
		}
	}
	if out == nil {
		out = [][2]int64{}
	}
	return out
}
