package protocols

import "github.com/cutcheck/cutcheck/model"

// MaxTxn is the largest transaction a source commits.
const MaxTxn = 3

// Txn is a transaction the source may commit: 1..T row events on distinct
// keys, in key order. (Reads see only transaction boundaries, so the order of
// events inside one transaction is fixed to keep the state space small.)
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

// Commits appends to buf every transaction the source may commit next under
// cfg (§2.1): 1..T events on distinct keys in increasing key order, each
// giving its key a value other than its current one (a delete only of a
// present key), without exceeding E row events in all.
func Commits(cfg *Config, l *model.Log, buf []Txn) []Txn {
	room := min(cfg.Txn, cfg.Events-DataEvents(l), MaxTxn)
	if room <= 0 {
		return buf
	}
	cur := l.State(l.Len())
	var t Txn
	return commitsFrom(cfg, &cur, &t, 0, room, buf)
}

func commitsFrom(cfg *Config, cur *model.Store, t *Txn, from model.Key, room int, buf []Txn) []Txn {
	for k := from; k < model.Key(cfg.Keys); k++ {
		for v := model.Value(0); v <= model.Value(cfg.Values); v++ {
			if v == cur[k] {
				continue
			}
			t.Ev[t.N] = model.Event{Key: k, Img: v}
			t.N++
			buf = append(buf, *t)
			if int(t.N) < room {
				buf = commitsFrom(cfg, cur, t, k+1, room, buf)
			}
			t.N--
		}
	}
	return buf
}
