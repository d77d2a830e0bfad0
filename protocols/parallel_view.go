package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/model"
)

// Describe renders a step in the words of §7.5.
func (m *parallel) Describe(s *parallelState, a parallelAction) string {
	c := &s.Cap
	i := int(a.Chunk)
	u := &c.Plan.Units[i]
	at := c.Log.Offset // positions as the log names them
	switch a.Kind {
	case parallelCommit:
		return DescribeCommit(&c.Log, a.Txn)
	case parallelLow:
		return fmt.Sprintf("chunk %d records low offset %d", i+1, at(c.Log.Len()))
	case parallelRead:
		t := *s
		m.Next(s, a, &t)
		k := nextKey(u)
		d := fmt.Sprintf("chunk %d reads %v = %v at coordinate %d", i+1, k, t.Cap.Plan.Units[i].Refresh[k], at(a.At))
		if a.At != c.Log.Len() {
			d += fmt.Sprintf(" (log end %d)", at(c.Log.Len()))
		}
		if s.Phase[i] == chunkHigh {
			d += fmt.Sprintf(", after its high offset %d", at(u.Hi))
		}
		return d
	case parallelHigh:
		return fmt.Sprintf("chunk %d records high offset %d", i+1, at(c.Log.Len()))
	case parallelClose:
		var out []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				if v := u.MergedIn(&c.Log, m.keyWindow(s, m.parts.window(u), k), k); v != model.Absent {
					out = append(out, fmt.Sprintf("%v=%v", k, v))
				}
			}
		}
		what := "emits merged"
		if m.cfg.Fault == CopyDropped {
			what = "drops merged"
		}
		d := fmt.Sprintf("chunk %d backfills %s and %s {%s} at %d", i+1, WindowString(&c.Log, m.parts.window(u)), what, strings.Join(out, " "), at(u.Hi))
		t := *s
		m.Next(s, a, &t)
		if t.Cap.AllClosed(m.cfg.Chunks) {
			switch h := m.parts.readerStart(&t.Cap.Plan); {
			case m.parts.ReaderStartAt != nil:
				d += fmt.Sprintf("; the live reader starts at s0 = %d (the variant's ReaderStartAt, exact)", at(h))
			case m.parts.ReaderStart != nil:
				d += fmt.Sprintf("; the live reader starts at s0 = %d, or later up to %d (the variant's ReaderStart, not the paper's minimum high)", at(0), at(h))
			case h == 0:
				d += fmt.Sprintf("; the live reader starts at s0 = %d (the minimum high)", at(0))
			default:
				d += fmt.Sprintf("; the live reader starts at s0 = %d, or later up to the minimum high %d", at(0), at(h))
			}
		}
		return d
	case parallelConsume:
		p := c.Pos + 1
		e := c.Log.At(p)
		o := c.Plan.Owner(e.Key)
		if w, ok := outsideWords(&m.cfg, c, e); ok {
			return fmt.Sprintf("live reader consumes position %d: %v := %v", at(p), e.Key, e.Img) + w
		}
		verdict := "withheld"
		if m.passesIn(s, e.Key, p) {
			verdict = "emitted"
		}
		high := fmt.Sprintf("high %d", at(c.Plan.Units[o].Hi))
		if s.Phase[o] < chunkHigh {
			high = "high not recorded yet"
		}
		return fmt.Sprintf("live reader consumes position %d: %v := %v, chunk %d %s, %s", at(p), e.Key, e.Img, o+1, high, verdict)
	case parallelStartLater:
		if m.parts.ReaderStartAt != nil || m.parts.ReaderStart != nil {
			return DescribeStartLater(c) + fmt.Sprintf(" (the variant's start %d)", at(m.startBound(s)))
		}
		return DescribeStartLater(c) + fmt.Sprintf(" (latest start %d)", at(m.startBound(s)))
	}
	return "?"
}

// ActionNames lists the kinds of steps.
func (m *parallel) ActionNames() []string { return parallelKindNames[:] }

// ActionKind is a's index in ActionNames.
func (m *parallel) ActionKind(a parallelAction) int { return int(a.Kind) }
