package protocols

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// MaxTxn is the largest transaction a source commits.
const MaxTxn = 3

// Txn is a transaction the source may commit: 1..T row events on distinct
// keys, in any order (the order inside a transaction is part of the history:
// a consumer meets the rows one at a time, §2.1).
type Txn struct {
	N  uint8
	Ev [MaxTxn]model.Event
}

// Events returns the transaction's events.
func (t *Txn) Events() []model.Event { return t.Ev[:t.N] }

// DataEvents counts the row events of the log (markers excluded).
func DataEvents(l *model.Log) int {
	n := 0
	for i := 0; i < int(l.N); i++ {
		if l.Ev[i].Key != model.NoKey {
			n++
		}
	}
	return n
}

// Commits yields every transaction the source may commit next under cfg
// (§2.1): 1..T events on distinct keys, in every order, each giving its key
// a value other than its current one (a delete only of a present key) —
// with cfg.NoOps any value, so also an update to the current value and a
// delete of an absent key; with cfg.WholeServer on key K too, outside the
// scope (§7.7) — without exceeding E row events in all. While the log is
// shorter than cfg.History, the one transaction yielded is the history's
// next. It yields rather than returning a
// slice so that Actions, which ranges over it for every state, needs no
// buffer of transactions.
func Commits(cfg *Config, l *model.Log) iter.Seq[Txn] {
	return func(yield func(Txn) bool) {
		n := DataEvents(l)
		if n < int(cfg.History.N) {
			if t, ok := historyTxn(&cfg.History, n); ok {
				yield(t)
			}
			return
		}
		room := min(cfg.Txn, cfg.Events-n, MaxTxn)
		if room <= 0 {
			return
		}
		cur := l.State(l.Len())
		var t Txn
		commitsFrom(cfg, &cur, &t, 0, room, yield)
	}
}

// commitsFrom extends t by one more row on a key not in used; false means
// yield asked to stop.
func commitsFrom(cfg *Config, cur *model.Store, t *Txn, used model.KeySet, room int, yield func(Txn) bool) bool {
	for k := model.Key(0); k < model.Key(cfg.sourceKeys()); k++ {
		if used.Has(k) {
			continue
		}
		for v := model.Value(0); v <= model.Value(cfg.Values); v++ {
			if v == cur[k] && !cfg.NoOps {
				continue
			}
			t.Ev[t.N] = model.Event{Key: k, Img: v}
			t.N++
			if !yield(*t) || int(t.N) < room && !commitsFrom(cfg, cur, t, used.With(k), room, yield) {
				return false
			}
			t.N--
		}
	}
	return true
}

// historyTxn is the transaction of h that starts at its event at (0-based),
// or false if no transaction starts there.
func historyTxn(h *model.Log, at int) (Txn, bool) {
	var t Txn
	if at > 0 && h.Ev[at-1].Txn == h.Ev[at].Txn {
		return t, false
	}
	for p := at; p < int(h.N) && h.Ev[p].Txn == h.Ev[at].Txn && int(t.N) < MaxTxn; p++ {
		t.Ev[t.N] = model.Event{Key: h.Ev[p].Key, Img: h.Ev[p].Img}
		t.N++
	}
	return t, true
}

// ParseHistory reads a fixed history (Config.History): one string per
// transaction, its rows "k0=1" separated by spaces or commas, a value 0 or
// ⊥ deleting the key. Bounds are checked by Validate.
func ParseHistory(txns []string) (model.Log, error) {
	var h model.Log
	for i, txn := range txns {
		rows := strings.FieldsFunc(txn, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
		if len(rows) == 0 {
			return h, fmt.Errorf("transaction %d is empty (a transaction writes at least one row)", i+1)
		}
		var evs []model.Event
		for _, row := range rows {
			key, val, ok := strings.Cut(row, "=")
			k, kerr := strconv.ParseUint(strings.TrimPrefix(key, "k"), 10, 8)
			v, verr := strconv.ParseUint(val, 10, 8)
			if val == "⊥" {
				v, verr = 0, nil
			}
			if !ok || !strings.HasPrefix(key, "k") || kerr != nil || k >= uint64(model.NoKey) || verr != nil {
				return h, fmt.Errorf("transaction %d: %q is not a row such as k0=1 (a key, = and a value, 0 or ⊥ to delete)", i+1, row)
			}
			evs = append(evs, model.Event{Key: model.Key(k), Img: model.Value(v)})
		}
		if !h.Commit(evs...) {
			return h, fmt.Errorf("more than %d row events", model.MaxLog)
		}
	}
	return h, nil
}

// HistoryString writes h as ParseHistory reads it, transactions separated
// by "; ".
func HistoryString(h *model.Log) string {
	var b strings.Builder
	for p := model.Coord(1); p <= h.Len(); p++ {
		e := h.At(p)
		switch {
		case p == 1:
		case h.At(p-1).Txn != e.Txn:
			b.WriteString("; ")
		default:
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%v=%v", e.Key, e.Img)
	}
	return b.String()
}

// historyProblem says what makes cfg.History one the source cannot commit
// under cfg's bounds, or "".
func (cfg *Config) historyProblem() string {
	h := &cfg.History
	if int(h.N) > cfg.Events {
		return fmt.Sprintf("%d row events, more than events = %d", h.N, cfg.Events)
	}
	cur := cfg.Initial
	var keys model.KeySet // the keys the transaction wrote so far
	rows := 0
	for p := model.Coord(1); p <= h.Len(); p++ {
		e, i := h.At(p), h.At(p).Txn
		if p == 1 || h.At(p-1).Txn != i {
			keys, rows = 0, 0
		}
		rows++
		switch {
		case rows > cfg.Txn:
			return fmt.Sprintf("transaction %d has more than txn = %d rows", i, cfg.Txn)
		case int(e.Key) >= cfg.sourceKeys():
			return fmt.Sprintf("transaction %d writes %v, outside keys k0..k%d", i, e.Key, cfg.sourceKeys()-1)
		case int(e.Img) > cfg.Values:
			return fmt.Sprintf("transaction %d writes %v := %d, outside values 0..%d (0 = ⊥)", i, e.Key, e.Img, cfg.Values)
		case keys.Has(e.Key):
			return fmt.Sprintf("transaction %d writes %v twice (a transaction's rows are on distinct keys)", i, e.Key)
		case cfg.NoOps:
		case cfg.InitialAny:
			return fmt.Sprintf("transaction %d writes %v := %v, a no-op write over some base store of initial any: set noops", i, e.Key, e.Img)
		case cur[e.Key] == e.Img:
			return fmt.Sprintf("transaction %d writes %v := %v, its value already (a no-op write): set noops to allow it", i, e.Key, e.Img)
		}
		keys, cur[e.Key] = keys.With(e.Key), e.Img
	}
	return ""
}

// ErrHistorySymmetry refuses value renaming with a fixed history: the
// history names its values, so the successors of a renamed state are not
// the renamed successors. It wraps explore.ErrNoSymmetry.
var ErrHistorySymmetry error = historySymmetry{}

type historySymmetry struct{}

func (historySymmetry) Error() string {
	return "a fixed history names its values: no value renaming (symmetry) applies to it"
}

func (historySymmetry) Unwrap() error { return explore.ErrNoSymmetry }

// ErrEmissionSymmetry refuses value renaming with exact-emission: the
// stream's digest (model.Capture.Emitted) mixes its values, and a renamed
// state's digest is not the digest of the renamed stream. It wraps
// explore.ErrNoSymmetry.
var ErrEmissionSymmetry error = emissionSymmetry{}

type emissionSymmetry struct{}

func (emissionSymmetry) Error() string {
	return "exact-emission keeps a digest of the stream's values: no value renaming (symmetry) applies to it"
}

func (emissionSymmetry) Unwrap() error { return explore.ErrNoSymmetry }

// sourceKeys is how many keys the source writes: the scope's, and with
// cfg.WholeServer key K beyond it (§7.7).
func (cfg *Config) sourceKeys() int {
	if cfg.WholeServer {
		return cfg.Keys + 1
	}
	return cfg.Keys
}

// InitialCaptures are the captures a run starts from, one per base store b0
// (§2.1): every store over the keys and values when cfg.InitialAny, else
// cfg.Initial alone; the log is empty, its positions start at
// cfg.CoordBase, and the scope is the keys. Each carries the sink rule
// cfg.Sink, and keeps a digest of its stream with cfg.ExactEmission.
func InitialCaptures(cfg *Config) []model.Capture {
	stores := []model.Store{cfg.Initial}
	if cfg.InitialAny {
		stores = []model.Store{{}}
		for k := 0; k < cfg.Keys; k++ {
			n := len(stores)
			for v := model.Value(1); v <= model.Value(cfg.Values); v++ {
				for _, st := range stores[:n] {
					st[k] = v
					stores = append(stores, st)
				}
			}
		}
	}
	out := make([]model.Capture, len(stores))
	for i, b0 := range stores {
		out[i].Plan.Keys = uint8(cfg.Keys)
		out[i].Log.Init = b0
		out[i].Log.Shift = cfg.shift()
		out[i].Rule, _ = cfg.Sink.ID() // a rule without one is refused before the search (sink.go)
		out[i].Digesting = cfg.ExactEmission
	}
	return out
}

// MayStartLater reports whether the consumer's start s0 may still move past
// the next position (S-OBS, §2.1 and §6): it has consumed nothing yet, the
// next position exists, and it is at most bound, the latest start the
// discipline allows given what has been recorded so far. Positions at or
// before s0 are never seen by the consumer (finite retention, §1.1), so only
// a copy can supply what they wrote.
func MayStartLater(c *model.Capture, bound model.Coord) bool {
	return c.Pos == c.Start && c.Pos < c.Log.Len() && c.Pos < bound
}

// StartLater moves the consumer's start one position on: s0 := s0 + 1.
func StartLater(c *model.Capture) {
	c.Start++
	c.Pos++
}

// NoBound is the start bound before any edge constrains it.
const NoBound = model.Coord(0xFF)

// EarliestLow is the smallest low edge of the units recorded so far, or
// NoBound: window-discard needs s0 ⊑ lo_i for every unit (§6.2).
func EarliestLow(p *model.Plan) model.Coord {
	b := NoBound
	for i := 0; i < int(p.N); i++ {
		b = min(b, p.Units[i].Lo)
	}
	return b
}

// ChunkKeys is chunk i of chunks over keys keys: the contiguous key range
// [i·K/C, (i+1)·K/C). Every protocol here cuts its table so, as a chunked
// scan reads by primary-key range (§7.2).
func ChunkKeys(i, keys, chunks int) model.KeySet {
	return model.Range(model.Key(i*keys/chunks), model.Key((i+1)*keys/chunks))
}

// NoOpInWindow (sometimes, with cfg.NoOps): a closed unit's window holds a
// no-op write on one of its keys — an event whose image is the key's value
// just before it (an UPDATE to the same value, a DELETE of an absent key),
// which window-discard must treat like any other event.
func NoOpInWindow(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		for p := u.Lo + 1; p <= min(u.Hi, c.Log.Len()); p++ {
			if e := c.Log.At(p); e.Key != model.NoKey && u.Domain.Has(e.Key) && e.Img == c.Log.Sigma(p-1, e.Key) {
				return fmt.Sprintf("unit %d: no-op write %v := %v at %d inside its window", i+1, e.Key, e.Img, c.Log.Offset(p))
			}
		}
	}
	return ""
}

// CopySharesEventTag (sometimes; the race no-duplicate-delivery must tell
// apart): a closed unit's copied row on k is tagged with its high edge, and
// the log event at that edge, on k too, was delivered — a copy and an event
// shared a tag.
func CopySharesEventTag(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) || u.Hi == 0 || u.Hi > c.Log.Len() {
			continue
		}
		k := c.Log.At(u.Hi).Key
		if k != model.NoKey && u.Survivors(&c.Log).Has(k) && c.Out.Tag[k] == u.Hi && c.Delivered.Has(k) {
			return fmt.Sprintf("unit %d: the copy of %v and the event at %d share the tag %d", i+1, k, c.Log.Offset(u.Hi), c.Log.Offset(u.Hi))
		}
	}
	return ""
}

// CopyTagPastRead (sometimes; the race exact-tags guards): a closed unit's
// copied row is what the stream last carries for its key, tagged with the
// high edge, and a row event lies between the key's read and that tag: the
// tag is exact only because the key stood still while the log moved
// (Lemma 4.1).
func CopyTagPastRead(c *model.Capture) string {
	for i := 0; i < int(c.Plan.N); i++ {
		u := &c.Plan.Units[i]
		if !c.UnitClosed(i) {
			continue
		}
		for k := range u.Survivors(&c.Log).Keys() {
			if c.Out.Tag[k] != u.Hi || c.Out.Val[k] != u.Refresh[k] {
				continue
			}
			for p := c.ReadAt[k] + 1; p <= min(u.Hi, c.Log.Len()); p++ {
				if c.Log.At(p).Key != model.NoKey {
					return fmt.Sprintf("unit %d: %v read at %d, copied with tag %d past the event at %d", i+1, k, c.Log.Offset(c.ReadAt[k]), c.Log.Offset(u.Hi), c.Log.Offset(p))
				}
			}
		}
	}
	return ""
}
