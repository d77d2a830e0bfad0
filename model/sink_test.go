package model

import (
	"strconv"
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

// Reference: §6.5 version-max, with the tag as the version. The rule sees
// tags as the log names them (Log.Shift): with the positions starting at
// 8, the entries at 2 and 3 are 9 and 10. A rule comparing them as text
// ("10" < "9") keeps the older row there and nowhere below 10; one keeping
// a byte of them does so with the positions starting at 254 (256 is 0).
// The shipped version-max rule holds the same row whatever the shift, and
// the encoding grows by the shift's two bytes only when there is one.
func TestSinkRuleOffsets(t *testing.T) {
	text := NewSinkRule("version-max-text", true, func(_ Value, tag Offset, e Offered, _ bool) bool {
		return strconv.Itoa(int(e.Tag)) >= strconv.Itoa(int(tag))
	})
	byteWide := NewSinkRule("version-max-uint8", true, func(_ Value, tag Offset, e Offered, _ bool) bool {
		return uint8(e.Tag) >= uint8(tag)
	})
	// The sink's value after the events at 1, 2, 3 (k0 := 1, 2, 3), in order.
	held := func(rule *SinkRule, shift uint16) Value {
		c := Capture{Rule: rule.id}
		c.Plan.Keys = 1
		c.Log.Shift = shift
		for v := Value(1); v <= 3; v++ {
			c.Log.Commit(Event{Key: 0, Img: v})
			c.Emit(0, v, c.Log.Len())
		}
		if c.Log.Offset(1) != Offset(shift)+1 {
			t.Errorf("shift %d: position 1 is named %d", shift, c.Log.Offset(1))
		}
		var d Capture
		if rest, ok := d.DecodeFrom(c.AppendTo(nil)); !ok || len(rest) != 0 || d != c {
			t.Errorf("shift %d: round trip ok=%v, %d left", shift, ok, len(rest))
		}
		return c.Held().Val[0]
	}
	for _, tt := range []struct {
		rule  *SinkRule
		shift uint16
		want  Value
	}{
		{VersionMax, 0, 3}, {VersionMax, 7, 3}, {VersionMax, 253, 3}, {VersionMax, 65535 - 3, 3},
		{text, 0, 3}, {text, 7, 2}, // 9 then "10": refused
		{byteWide, 0, 3}, {byteWide, 7, 3}, {byteWide, 253, 2}, // 255 then 256 as 0: refused
	} {
		if got := held(tt.rule, tt.shift); got != tt.want {
			t.Errorf("%s with positions from %d: the sink holds %v, want %v", tt.rule.Name, tt.shift+1, got, tt.want)
		}
	}
	var c Capture
	c.Plan.Keys = 1
	plain := len(c.AppendTo(nil))
	c.Log.Shift = 7
	if b := c.AppendTo(nil); len(b) != plain+2 || b[0] != 1|shiftFlag {
		t.Errorf("a shifted encoding: %d bytes (plain %d), width byte %#x", len(b), plain, b[0])
	}
}
