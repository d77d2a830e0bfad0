package model

import (
	"strings"
	"testing"
)

// Reference: §6, Def. 6.1 (last-writer-wins replay); §6.5 version-max. One
// key, the log k0:=1 (1), k0:=2 (2), k0:=⊥ (3); each rule fed the same
// stream: the copy k0=1@1, the event at 3, the event at 2 (out of order),
// then the copy k0=2@2. The stream's replay (Out) is the same under every
// rule; the sink holds what the rule took.
func TestSinkRuleApply(t *testing.T) {
	tests := []struct {
		rule *SinkRule
		want []Value // the sink's value after each entry
	}{
		{LastWriterWins, []Value{1, Absent, 2, 2}},
		{VersionMax, []Value{1, Absent, Absent, Absent}}, // tags 2 and 2 are below 3
		{InsertIgnore, []Value{1, Absent, 2, 2}},         // the last copy meets a row: ignored
		{UpsertOnly, []Value{1, 1, 2, 2}},                // the delete is not applied
	}
	for _, tt := range tests {
		t.Run(tt.rule.Name, func(t *testing.T) {
			c := Capture{Rule: tt.rule.id}
			c.Log.Commit(Event{Key: 0, Img: 1, Txn: 1})
			c.Log.Commit(Event{Key: 0, Img: 2, Txn: 2})
			c.Log.Commit(Event{Key: 0, Img: Absent, Txn: 3})
			steps := []func(){
				func() { c.EmitCopy(0, 1, 1) },
				func() { c.Emit(0, Absent, 3) },
				func() { c.Emit(0, 2, 2) },
				func() { c.EmitCopy(0, 2, 2) },
			}
			for i, step := range steps {
				step()
				if got := c.Held().Val[0]; got != tt.want[i] {
					t.Errorf("after entry %d the sink holds %v, want %v", i+1, got, tt.want[i])
				}
			}
			if c.Out.Val[0] != 2 || c.Out.Tag[0] != 2 {
				t.Errorf("the stream's replay is %v@%d, want 2@2", c.Out.Val[0], c.Out.Tag[0])
			}
			// The rule and the sink are encoded, and decode back.
			b := c.AppendTo(nil)
			var d Capture
			rest, ok := d.DecodeFrom(b)
			if !ok || len(rest) != 0 || d.Sink != c.Sink || d.Out != c.Out || d.SinkRule() != tt.rule {
				t.Errorf("round trip: ok %v, %d left, sink %v, want %v", ok, len(rest), d.Sink, c.Sink)
			}
		})
	}
}

// Reference: §6, Def. 6.1. Without a rule the encoding is what it always
// was: nothing of Sink, no flag.
func TestSinkDefaultEncoding(t *testing.T) {
	var c Capture
	c.Plan.Keys = 2
	c.Log.Commit(Event{Key: 1, Img: 1, Txn: 1})
	c.Emit(1, 1, 1)
	plain := c.AppendTo(nil)
	c.Rule = VersionMax.id
	c.Sink = c.Out
	ruled := c.AppendTo(nil)
	if plain[0] != 2 || ruled[0] != 2|sinkFlag || len(ruled) != len(plain)+1+2*2 {
		t.Errorf("width bytes %#x, %#x; lengths %d, %d", plain[0], ruled[0], len(plain), len(ruled))
	}
	if _, err := LookupSink("newest"); err == nil || !strings.Contains(err.Error(), "version-max") {
		t.Errorf("an unknown rule: %v", err)
	}
	if r, err := LookupSink(""); err != nil || !r.IsLastWriterWins() {
		t.Errorf("the default rule: %v, %v", r, err)
	}
}
