package model_test

import (
	"bytes"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// sampleCapture sets every field of a Capture to something other than zero.
func sampleCapture(t testing.TB) model.Capture {
	var c model.Capture
	c.Log.Commit(ev(ka, 1), ev(kb, 2))
	c.Log.Commit(model.Event{Key: model.NoKey})
	c.Log.Commit(ev(kc, 3), ev(ka, bot))
	c.Plan = plan(3, 4,
		unit(keys(ka), 1, 3, model.Store{ka: 1}),
		model.Unit{Domain: keys(kb, kc), Lo: 2, Hi: 4, Refresh: model.Store{kb: 2, kc: bot}, Read: keys(kb)})
	c.ReadAt = [model.MaxKeys]model.Coord{1, 2, 4}
	c.Pos, c.Start = 4, 1
	c.Out.Apply(model.Entry{Key: ka, Val: 1, Tag: 1})
	c.Out.Apply(model.Entry{Key: kb, Val: 2, Tag: 2})
	c.Closed = 0b01
	c.Partial = true
	c.Delivered = keys(ka, kc)
	return c
}

// Reference: §3.1 (the capture plan records the final units, brackets, read
// results and frontier): the encoding of a capture state is canonical and
// complete, so equal encodings mean equal states.
func TestCaptureRoundTrip(t *testing.T) {
	base := sampleCapture(t)
	prefix, tail := []byte("head"), []byte("tail")
	buf := base.AppendTo(append([]byte(nil), prefix...))
	if !bytes.HasPrefix(buf, prefix) {
		t.Fatal("AppendTo overwrote the buffer")
	}
	enc := buf[len(prefix):]
	// 3 keys in scope: width, 3 initial values, length, 5 events, plan
	// header, 2 units of 6+3 bytes, 3×3 per-key bytes, 5 bytes of consumer
	// (position, start, closed units, partial, delivered keys).
	if want := 1 + 3 + 1 + 3*5 + 3 + 2*(6+3) + 3*3 + 5; len(enc) != want {
		t.Errorf("encoding of a 3-key capture: %d bytes, want %d", len(enc), want)
	}
	var got model.Capture
	rest, ok := got.DecodeFrom(append(append([]byte(nil), enc...), tail...))
	if !ok || got != base || !bytes.Equal(rest, tail) {
		t.Fatalf("round trip: ok=%v rest=%q\n got  %+v\n want %+v", ok, rest, got, base)
	}
	for n := 0; n < len(enc); n++ {
		if _, ok := new(model.Capture).DecodeFrom(enc[:n]); ok {
			t.Errorf("decoding %d of %d bytes succeeded", n, len(enc))
		}
	}

	// Each variant changes one field; all encodings must differ.
	variants := []struct {
		name   string
		mutate func(c *model.Capture)
	}{
		{"base", func(c *model.Capture) {}},
		{"log key", func(c *model.Capture) { c.Log.Ev[0].Key = kc }},
		{"log image", func(c *model.Capture) { c.Log.Ev[0].Img = 2 }},
		{"log label", func(c *model.Capture) { c.Log.Ev[1].Txn = 2 }},
		{"log length", func(c *model.Capture) { c.Log.Commit(ev(ka, 1)) }},
		{"plan keys", func(c *model.Capture) { c.Plan.Keys = 4 }},
		{"plan frontier", func(c *model.Capture) { c.Plan.Frontier = 5 }},
		{"unit count", func(c *model.Capture) { c.Plan.Add(unit(keys(3), 0, 0, model.Store{})) }},
		{"domain", func(c *model.Capture) { c.Plan.Units[0].Domain = keys(ka, 3) }},
		{"domain high byte", func(c *model.Capture) { c.Plan.Units[0].Domain = keys(ka, 9) }},
		{"lo", func(c *model.Capture) { c.Plan.Units[0].Lo = 0 }},
		{"hi", func(c *model.Capture) { c.Plan.Units[0].Hi = 2 }},
		{"read", func(c *model.Capture) { c.Plan.Units[1].Read = keys(kb, kc) }},
		{"read high byte", func(c *model.Capture) { c.Plan.Units[1].Read = keys(kb, 10) }},
		{"refresh", func(c *model.Capture) { c.Plan.Units[1].Refresh[kc] = 1 }},
		{"refresh of the last key", func(c *model.Capture) { c.Plan.Units[1].Refresh[model.MaxKeys-1] = 1 }},
		// Keys beyond the scope (3 here) are written only when they hold
		// something: then every key is.
		{"initial value beyond the scope", func(c *model.Capture) { c.Log.Init[model.MaxKeys-1] = 1 }},
		{"read at beyond the scope", func(c *model.Capture) { c.ReadAt[3] = 1 }},
		{"out value beyond the scope", func(c *model.Capture) { c.Out.Val[4] = 1 }},
		{"out tag beyond the scope", func(c *model.Capture) { c.Out.Tag[5] = 1 }},
		{"refresh beyond the scope", func(c *model.Capture) { c.Plan.Units[0].Refresh[6] = 1 }},
		{"read at", func(c *model.Capture) { c.ReadAt[kc] = 3 }},
		{"out value", func(c *model.Capture) { c.Out.Val[kc] = 3 }},
		{"out tag", func(c *model.Capture) { c.Out.Tag[kb] = 3 }},
		{"pos", func(c *model.Capture) { c.Pos = 5 }},
		{"start", func(c *model.Capture) { c.Start = 0 }},
		{"closed", func(c *model.Capture) { c.Closed = 0b11 }},
		{"partial", func(c *model.Capture) { c.Partial = false }},
		{"shift", func(c *model.Capture) { c.Log.Shift = 7 }},
		{"shift high byte", func(c *model.Capture) { c.Log.Shift = 7 + 1<<8 }},
		{"shift under a rule", func(c *model.Capture) { c.Log.Shift, c.Rule, c.Sink.Tag[kb] = 253, 1, 2 }},
	}
	seen := map[string]string{}
	for _, v := range variants {
		c := base
		v.mutate(&c)
		e := string(c.AppendTo(nil))
		if prev, dup := seen[e]; dup {
			t.Errorf("%q and %q encode identically", v.name, prev)
		}
		seen[e] = v.name
		var d model.Capture
		rest, ok := d.DecodeFrom([]byte(e))
		if !ok || len(rest) != 0 || d != c {
			t.Errorf("%s: round trip ok=%v rest=%d\n got  %+v\n want %+v", v.name, ok, len(rest), d, c)
		}
	}

	// Counts beyond the fixed bounds are refused.
	if _, ok := new(model.Capture).DecodeFrom([]byte{model.MaxKeys + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); ok {
		t.Error("a key width beyond MaxKeys decoded")
	}
	if _, ok := new(model.Capture).DecodeFrom([]byte{0, model.MaxLog + 1}); ok {
		t.Error("a log longer than MaxLog decoded")
	}
	if _, ok := new(model.Capture).DecodeFrom([]byte{0, 0, 1, model.MaxUnits + 1, 0}); ok {
		t.Error("a plan with more than MaxUnits units decoded")
	}
}

// Reference: Lemma 4.3 (closed units) — the capture's record of which units
// have emitted their close block, and the final plan at the consumer position.
func TestCaptureClosed(t *testing.T) {
	var c model.Capture
	if !c.AllClosed(0) || c.AllClosed(1) {
		t.Error("empty capture: AllClosed(0) must hold and AllClosed(1) not")
	}
	c.Plan.Add(unit(keys(ka), 0, 1, model.Store{}))
	c.Plan.Add(unit(keys(kb), 0, 2, model.Store{}))
	cases := []struct {
		closed uint8
		n      int
		want   bool
	}{
		{0b00, 2, false},
		{0b01, 2, false},
		{0b10, 2, false},
		{0b11, 2, true},
		{0b11, 3, false}, // a third unit is still to be recorded
		{0b01, 1, false}, // two units recorded, not one
		{0b111, 2, false},
	}
	for _, tc := range cases {
		c.Closed = tc.closed
		if got := c.AllClosed(tc.n); got != tc.want {
			t.Errorf("Closed=%03b: AllClosed(%d) = %v, want %v", tc.closed, tc.n, got, tc.want)
		}
	}
	c.Closed = 0b10
	if c.UnitClosed(0) || !c.UnitClosed(1) {
		t.Error("UnitClosed disagrees with the bits")
	}
	c.Pos = 7
	if fp := c.FinalPlan(); fp.Frontier != 7 || c.Plan.Frontier != 0 || fp.N != 2 {
		t.Errorf("FinalPlan: frontier %d, recorded plan frontier %d", fp.Frontier, c.Plan.Frontier)
	}
	if !c.Emit(ka, 1, 3) || c.Emit(ka, 2, 2) || c.Out.Val[ka] != 2 || c.Out.Tag[ka] != 2 {
		t.Errorf("Emit: %+v", c.Out)
	}
}

// Reference: Thm 3, §6.2, §9 — Emit and EmitCopy mark what the delivery and
// exact-tags checks read: a log event delivered again at the key's last tag
// (even with a copy sharing that tag in between) is a duplicate; a copy
// sharing an event's tag, before or after it, is not; a copy at another tag
// ends the event's delivery; an entry whose value is not σ at its tag, or
// whose tag is past the log, is inexact; tag 0 stands for the base store.
func TestEmitMarks(t *testing.T) {
	var c model.Capture
	c.Plan.Keys = 2
	c.Log.Init[1] = 2
	c.Log.Commit(model.Event{Key: 0, Img: 1})
	c.Log.Commit(model.Event{Key: 0, Img: 2})
	steps := []struct {
		copied       bool
		k            model.Key
		v            model.Value
		tag          model.Coord
		dup, inexact bool
	}{
		{false, 0, 1, 1, false, false}, // the event at 1
		{true, 0, 1, 1, false, false},  // a copy sharing its tag
		{false, 0, 1, 1, true, false},  // the event at 1 again, past the copy
		{true, 1, 2, 0, false, false},  // a base row, tag 0
		{true, 1, 1, 0, false, true},   // a value the base store never held at 0
		{true, 0, 2, 2, false, false},  // a copy at 2: the event at 1 is no longer the last
		{false, 0, 2, 2, false, false}, // the event at 2 after a copy at its tag
		{true, 0, 2, 3, false, true},   // a tag past the log
	}
	for i, st := range steps {
		c.Dup, c.Inexact = 0, 0
		if st.copied {
			c.EmitCopy(st.k, st.v, st.tag)
		} else {
			c.Emit(st.k, st.v, st.tag)
		}
		if c.Dup.Has(st.k) != st.dup || c.Inexact.Has(st.k) != st.inexact {
			t.Errorf("step %d (%v=%v@%d, copy %v): dup %v inexact %v, want %v %v", i, st.k, st.v, st.tag, st.copied, c.Dup.Has(st.k), c.Inexact.Has(st.k), st.dup, st.inexact)
		}
	}
}
