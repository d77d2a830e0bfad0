package model_test

import (
	"bytes"
	"testing"

	"github.com/cutcheck/cutcheck/model"
)

// Reference: Def. 6.1 (the replay folds each key on its own) — a stream's
// digest is taken key by key: the order across keys does not change it;
// an extra entry, a lost one, another value or tag, or two entries of one
// key swapped does.
func TestDigest(t *testing.T) {
	s := model.Stream{{Key: ka, Val: 1, Tag: 1}, {Key: kb, Val: 2, Tag: 2}, {Key: ka, Val: 1, Tag: 3}, {Key: kb, Val: bot, Tag: 4}}
	d := s.Digest()
	if d.N[ka] != 2 || d.N[kb] != 2 || d.N[kc] != 0 {
		t.Errorf("counts %v, want 2 2 0", d.N)
	}
	across := model.Stream{s[1], s[0], s[3], s[2]}
	if across.Digest() != d {
		t.Error("reordering across keys changed the digest")
	}
	for name, o := range map[string]model.Stream{
		"extra copy":     {s[0], s[0], s[1], s[2], s[3]},
		"lost entry":     {s[0], s[1], s[3]},
		"other value":    {{Key: ka, Val: 2, Tag: 1}, s[1], s[2], s[3]},
		"other tag":      {{Key: ka, Val: 1, Tag: 2}, s[1], s[2], s[3]},
		"swapped in key": {s[2], s[1], s[0], s[3]},
	} {
		if o.Digest() == d {
			t.Errorf("%s: same digest", name)
		}
	}
	// Emit keeps it only when Digesting, and then as the stream's.
	var c, off model.Capture
	c.Digesting = true
	for _, cp := range []*model.Capture{&c, &off} {
		cp.Emit(ka, 1, 1)
		cp.Emit(kb, 2, 2)
		cp.EmitCopy(ka, 1, 3)
		cp.Emit(kb, bot, 4)
	}
	if c.Emitted != d {
		t.Errorf("the capture's digest %+v, the stream's %+v", c.Emitted, d)
	}
	if off.Emitted != (model.Digest{}) {
		t.Errorf("a capture not digesting kept %+v", off.Emitted)
	}
}

// Reference: §3.1, §10 — a digesting capture's encoding carries the digest
// (two streams that differ give two states) and round-trips, under a sink
// rule too; a capture that is not digesting encodes as it always did.
func TestCaptureDigestEncoding(t *testing.T) {
	base := sampleCapture(t)
	plain := base.AppendTo(nil)
	dig := base
	dig.Digesting = true
	dig.Emitted.Add(model.Entry{Key: ka, Val: 1, Tag: 1})
	enc := dig.AppendTo(nil)
	if len(enc) != len(plain)+3+8 {
		t.Errorf("digesting encoding %d bytes, want %d (3 counts and the sum more)", len(enc), len(plain)+3+8)
	}
	other := dig
	other.Emitted.Add(model.Entry{Key: ka, Val: 1, Tag: 1})
	if bytes.Equal(enc, other.AppendTo(nil)) || bytes.Equal(enc, plain) {
		t.Error("digests that differ encode identically")
	}
	for _, c := range []model.Capture{dig, other, withRule(dig), withRule(other)} {
		var got model.Capture
		rest, ok := got.DecodeFrom(c.AppendTo(nil))
		if !ok || len(rest) != 0 || got != c {
			t.Errorf("round trip ok=%v rest=%d\n got  %+v\n want %+v", ok, len(rest), got, c)
		}
	}
	// A count on a key beyond the scope widens the encoding to every key.
	wide := dig
	wide.Emitted.N[model.MaxKeys-1] = 1
	var got model.Capture
	if rest, ok := got.DecodeFrom(wide.AppendTo(nil)); !ok || len(rest) != 0 || got != wide {
		t.Errorf("count beyond the scope: round trip ok=%v\n got  %+v\n want %+v", ok, got, wide)
	}
}

func withRule(c model.Capture) model.Capture {
	id, _ := model.VersionMax.ID()
	c.Rule = id
	c.Sink.Val[ka], c.Sink.Tag[ka] = 1, 1
	return c
}
