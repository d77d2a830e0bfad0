package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// EventString renders the event at position p, named as the log names it
// (Log.Offset): "3:k1=2/t2" or "4:H1".
func EventString(l *model.Log, p model.Coord) string {
	e := l.At(p)
	if e.Key == model.NoKey {
		return fmt.Sprintf("%d:%s", l.Offset(p), MarkerName(e.Img))
	}
	return fmt.Sprintf("%d:%v=%v/t%d", l.Offset(p), e.Key, e.Img, e.Txn)
}

// CaptureFields renders the shared part of a state as trace fields, its
// positions as the log names them (Log.Offset); a protocol appends its
// control fields.
func CaptureFields(c *model.Capture, keys int) []explore.Field {
	at := c.Log.Offset
	var log []string
	for p := model.Coord(1); p <= c.Log.Len(); p++ {
		log = append(log, EventString(&c.Log, p))
	}
	f := []explore.Field{{Name: "log", Value: "[" + strings.Join(log, " ") + "]"}}
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		var reads []string
		for k := model.Key(0); k < model.Key(keys); k++ {
			if u.Read.Has(k) {
				reads = append(reads, fmt.Sprintf("%v=%v@%d", k, u.Refresh[k], at(c.ReadAt[k])))
			}
		}
		state := "open"
		if c.UnitClosed(i) {
			state = "closed"
		}
		hi := fmt.Sprint(at(u.Hi))
		if u.Hi < u.Lo {
			hi = "?" // the high edge is not recorded yet
		}
		f = append(f, explore.Field{Name: fmt.Sprintf("unit %d", i+1),
			Value: fmt.Sprintf("%s bracket (%d, %s] reads {%s} %s", KeySetString(u.Domain, keys), at(u.Lo), hi, strings.Join(reads, " "), state)})
	}
	var out []string
	for k := model.Key(0); k < model.Key(keys); k++ {
		out = append(out, fmt.Sprintf("%v=%v@%d", k, c.Out.Val[k], at(c.Out.Tag[k])))
	}
	for k := model.Key(keys); k < model.MaxKeys; k++ {
		if c.Out.Tag[k] != 0 || c.Out.Val[k] != model.Absent { // an entry outside the scope (§7.7) is wrong: shown
			out = append(out, fmt.Sprintf("%v=%v@%d", k, c.Out.Val[k], at(c.Out.Tag[k])))
		}
	}
	f = append(f,
		explore.Field{Name: "consumed", Value: fmt.Sprintf("%d (from %d)", at(c.Pos), at(c.Start))},
		explore.Field{Name: "replay", Value: "{" + strings.Join(out, " ") + "}"},
		explore.Field{Name: "σ", Value: StoreString(c.Log.State(c.Pos), keys)},
	)
	if c.Rule != 0 { // what the sink holds under its rule, beside the stream's replay
		var held []string
		for k := model.Key(0); k < model.Key(keys); k++ {
			held = append(held, fmt.Sprintf("%v=%v@%d", k, c.Sink.Val[k], at(c.Sink.Tag[k])))
		}
		f = append(f, explore.Field{Name: "sink (" + c.SinkRule().Name + ")", Value: "{" + strings.Join(held, " ") + "}"})
	}
	if c.Digesting { // how many entries each key received (exact-emission)
		var n []string
		for k := model.Key(0); k < model.Key(keys); k++ {
			n = append(n, fmt.Sprintf("%v×%d", k, c.Emitted.N[k]))
		}
		f = append(f, explore.Field{Name: "entries", Value: "{" + strings.Join(n, " ") + "}"})
	}
	return f
}

// KeySetString renders the keys of s below keys: "{k0 k2}".
func KeySetString(s model.KeySet, keys int) string {
	var ks []string
	for k := model.Key(0); k < model.Key(keys); k++ {
		if s.Has(k) {
			ks = append(ks, k.String())
		}
	}
	return "{" + strings.Join(ks, " ") + "}"
}

// StoreString renders a store over keys 0..keys-1: "{k0=1 k1=⊥}".
func StoreString(s model.Store, keys int) string {
	var out []string
	for k := model.Key(0); k < model.Key(keys); k++ {
		out = append(out, fmt.Sprintf("%v=%v", model.Key(k), s[k]))
	}
	return "{" + strings.Join(out, " ") + "}"
}

// View is a state as plain data, for JSON traces and the HTML picture.
type View struct {
	Log      []EventView `json:"log"`
	Units    []UnitView  `json:"units"`
	Consumed int         `json:"consumed"`
	Start    int         `json:"start"`
	Replay   []KeyValue  `json:"replay"`
	Source   []KeyValue  `json:"source"` // σ at the consumer's position
	// Sink is what the sink holds under a merge rule other than the
	// default (SinkRule names it): the replay and cut claims judge it, not
	// Replay, the stream's replay.
	Sink     []KeyValue        `json:"sink,omitempty"`
	SinkRule string            `json:"sink_rule,omitempty"`
	Control  map[string]string `json:"control,omitempty"`
	// CoordBase is the log's first position when it is not 1 (Config.
	// CoordBase): the view's positions, tags and edges are prefix lengths
	// (the model's count), and the log names position p as p+CoordBase-1.
	CoordBase int `json:"coord_base,omitempty"`
}

// EventView is one log position.
type EventView struct {
	Pos    int    `json:"pos"`
	Marker string `json:"marker,omitempty"` // "L1", "H1", ... for a watermark
	Key    int    `json:"key"`              // -1 for a marker
	Value  int    `json:"value"`            // 0 = ⊥ (a delete)
	Txn    int    `json:"txn"`
}

// UnitView is one unit of the plan recorded so far.
type UnitView struct {
	Keys   []int      `json:"keys"`
	Lo     int        `json:"lo"`
	Hi     int        `json:"hi"`
	Reads  []ReadView `json:"reads"`
	Closed bool       `json:"closed"`
}

// ReadView is one read result and the latent position it reflects.
type ReadView struct {
	Key   int `json:"key"`
	Value int `json:"value"`
	At    int `json:"at"`
}

// KeyValue is one key's value (0 = ⊥) and, for replays, its last tag.
type KeyValue struct {
	Key   int `json:"key"`
	Value int `json:"value"`
	Tag   int `json:"tag,omitempty"`
}

// CaptureView builds the View of a state's shared part.
func CaptureView(c *model.Capture, keys int) View {
	v := View{Consumed: int(c.Pos), Start: int(c.Start)}
	if c.Log.Shift != 0 {
		v.CoordBase = int(c.Log.Shift) + 1
	}
	for p := model.Coord(1); p <= c.Log.Len(); p++ {
		e := c.Log.At(p)
		ev := EventView{Pos: int(p), Key: int(e.Key), Value: int(e.Img), Txn: int(e.Txn)}
		if e.Key == model.NoKey {
			ev.Key, ev.Value, ev.Marker = -1, 0, MarkerName(e.Img)
		}
		v.Log = append(v.Log, ev)
	}
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		uv := UnitView{Lo: int(u.Lo), Hi: int(u.Hi), Closed: c.UnitClosed(i)}
		for k := model.Key(0); k < model.Key(keys); k++ {
			if u.Domain.Has(k) {
				uv.Keys = append(uv.Keys, int(k))
			}
			if u.Read.Has(k) {
				uv.Reads = append(uv.Reads, ReadView{int(k), int(u.Refresh[k]), int(c.ReadAt[k])})
			}
		}
		v.Units = append(v.Units, uv)
	}
	src := c.Log.State(c.Pos)
	for k := 0; k < keys; k++ {
		v.Replay = append(v.Replay, KeyValue{k, int(c.Out.Val[k]), int(c.Out.Tag[k])})
		v.Source = append(v.Source, KeyValue{Key: k, Value: int(src[k])})
	}
	for k := keys; k < model.MaxKeys; k++ {
		if c.Out.Tag[k] != 0 || c.Out.Val[k] != model.Absent { // an entry outside the scope (§7.7)
			v.Replay = append(v.Replay, KeyValue{k, int(c.Out.Val[k]), int(c.Out.Tag[k])})
		}
	}
	if c.Rule != 0 {
		v.SinkRule = c.SinkRule().Name
		for k := 0; k < keys; k++ {
			v.Sink = append(v.Sink, KeyValue{k, int(c.Sink.Val[k]), int(c.Sink.Tag[k])})
		}
	}
	return v
}

// DescribeEmitted renders the entries a step emitted, from the replay before and
// after it: "k1=2@6 k2=1@6", or "nothing" (tags as the log names them).
func DescribeEmitted(s, t *model.Capture, keys int) string {
	at := t.Log.Offset
	var out []string
	for k := 0; k < keys; k++ {
		switch kk := model.Key(k); {
		case t.Dup.Has(kk) && !s.Dup.Has(kk):
			out = append(out, fmt.Sprintf("%v=%v@%d (again)", kk, t.Out.Val[k], at(t.Out.Tag[k])))
		case t.Out.Tag[k] != s.Out.Tag[k] || t.Out.Val[k] != s.Out.Val[k]:
			out = append(out, fmt.Sprintf("%v=%v@%d", kk, t.Out.Val[k], at(t.Out.Tag[k])))
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " ")
}

// DescribeCommit: "source commits k2 := ⊥ at position 5", or for several
// rows "source commits t3 {k0 := 1, k2 := ⊥} at positions 5–6".
func DescribeCommit(l *model.Log, t Txn) string {
	var ev []string
	for _, e := range t.Events() {
		ev = append(ev, fmt.Sprintf("%v := %v", e.Key, e.Img))
	}
	from := l.Offset(l.Len() + 1)
	if t.N == 1 {
		return fmt.Sprintf("source commits %s at position %d", ev[0], from)
	}
	return fmt.Sprintf("source commits t%d {%s} at positions %d–%d", l.Txns()+1, strings.Join(ev, ", "), from, from+model.Offset(t.N)-1)
}

// bufferString renders buffered rows with their read values: "{k0=1 k2=2}".
func bufferString(u *model.Unit, buf model.KeySet, keys int) string {
	var out []string
	for k := model.Key(0); k < model.Key(keys); k++ {
		if buf.Has(k) {
			out = append(out, fmt.Sprintf("%v=%v", k, u.Refresh[k]))
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

// WindowString renders window w with its edges as the log names them
// (Log.Offset): "(3, 5]".
func WindowString(l *model.Log, w model.Window) string {
	return fmt.Sprintf("(%d, %d]", l.Offset(w.Lo), l.Offset(w.Hi))
}
