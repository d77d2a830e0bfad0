package model_test

import (
	"errors"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// The paper's keys a, b, c.
const (
	ka model.Key = 0
	kb model.Key = 1
	kc model.Key = 2
)

// bot is ⊥.
const bot = model.Absent

func ev(k model.Key, v model.Value) model.Event { return model.Event{Key: k, Img: v} }

// logOf commits each event as its own transaction.
func logOf(t testing.TB, events ...model.Event) model.Log {
	t.Helper()
	var l model.Log
	for _, e := range events {
		if !l.Commit(e) {
			t.Fatalf("commit %v refused", e)
		}
	}
	return l
}

// keys builds a key set.
func keys(ks ...model.Key) model.KeySet {
	var s model.KeySet
	for _, k := range ks {
		s = s.With(k)
	}
	return s
}

// unit builds a unit whose read covers its whole domain (O3 holds).
func unit(dom model.KeySet, lo, hi model.Coord, refresh model.Store) model.Unit {
	return model.Unit{Domain: dom, Lo: lo, Hi: hi, Refresh: refresh, Read: dom}
}

func plan(nkeys uint8, f model.Coord, units ...model.Unit) model.Plan {
	p := model.Plan{Keys: nkeys, Frontier: f}
	for _, u := range units {
		p.Add(u)
	}
	return p
}

// failure unwraps err into a *model.Failure, failing the test if it is not one.
func failure(t testing.TB, err error) *model.Failure {
	t.Helper()
	var f *model.Failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v (%T) is not a *model.Failure", err, err)
	}
	return f
}

func coords(cs ...model.Coord) model.CoordSet {
	var s model.CoordSet
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

func streamEqual(a, b model.Stream) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
