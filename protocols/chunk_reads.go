package protocols

import (
	"github.com/cutcheck/cutcheck/model"
)

// PublishedRead is ReadonlyParts.Read as published: c is a transaction
// boundary in [lo, now] (A-read).
func PublishedRead(l *model.Log, lo, c model.Coord) bool { return c >= lo && l.Boundary(c) }

// nextKey is the lowest key of the chunk not yet read.
func nextKey(u *model.Unit) model.Key {
	for k := model.Key(0); k < model.Key(model.MaxKeys); k++ {
		if u.Domain.Has(k) && !u.Read.Has(k) {
			return k
		}
	}
	return model.NoKey
}
