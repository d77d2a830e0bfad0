package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

func (m *readonly) ActionNames() []string { return readonlyActionNames }

func (m *readonly) ActionKind(a readonlyAction) int { return int(a.Kind) }

func (m *readonly) Describe(s *readonlyState, a readonlyAction) string {
	l := &s.Cap.Log
	i := int(s.Cap.Plan.N) - 1
	at := l.Offset // positions as the log names them
	switch a.Kind {
	case readonlyCommit:
		switch {
		case s.Cap.Partial:
			return fmt.Sprintf("source appends the rest of t%d (%d rows) at position %d", l.Txns(), a.Txn.N, at(l.Len()+1))
		case m.cfg.Fault == SplitTransaction && a.Txn.N >= 2:
			return DescribeCommit(l, a.Txn) + fmt.Sprintf(", exposing only its first row at position %d", at(l.Len()+1))
		}
		return DescribeCommit(l, a.Txn)
	case readonlySampleLow:
		c := m.sample(l)
		return fmt.Sprintf("sample low for chunk %d at position %d: G(%d) = %s", i+2, at(l.Len()), at(c), txnSetString(l.Executed(c)))
	case readonlyReadKey:
		k := nextKey(&s.Cap.Plan.Units[i])
		d := fmt.Sprintf("read %v = %v at coordinate %d (chunk %d", k, l.Sigma(a.At, k), at(a.At), i+1)
		if a.At != l.Len() {
			d += fmt.Sprintf(", log end %d", at(l.Len()))
		}
		return d + ")"
	case readonlySampleHigh:
		c := m.sample(l)
		return fmt.Sprintf("sample high for chunk %d at position %d: G(%d) = %s", i+1, at(l.Len()), at(c), txnSetString(l.Executed(c)))
	case readonlyConsume:
		p := s.Cap.Pos + 1
		e := l.At(p)
		t := *s
		m.Next(s, a, &t)
		d := fmt.Sprintf("consume position %d: %v := %v (t%d)", at(p), e.Key, e.Img, e.Txn)
		if w, ok := outsideWords(&m.cfg, &s.Cap, e); ok {
			return d + w
		}
		switch {
		case s.Buf.Has(e.Key) && !t.Buf.Has(e.Key):
			d += fmt.Sprintf(" in window, discards buffered %v", e.Key) + m.parts.Discard.words()
		case s.Buf.Has(e.Key) && m.parts.Discard != nil && m.inWindow(s, p):
			d += fmt.Sprintf(" in window, buffered %v kept", e.Key) + m.parts.Discard.words()
		case m.inWindow(s, p):
			d += " in window"
		}
		return d + ", emitted"
	case readonlyRelease:
		t := *s
		m.Next(s, a, &t)
		return fmt.Sprintf("release chunk %d: emit survivors %s", i+1, DescribeEmitted(&s.Cap, &t.Cap, m.cfg.Keys))
	case readonlyStartLater:
		return DescribeStartLater(&s.Cap)
	}
	return "?"
}

// txnSetString renders an executed set: "{t1 t2}".
func txnSetString(s model.TxnSet) string {
	var out []string
	for t := uint8(1); t < 64; t++ {
		if s.Has(t) {
			out = append(out, fmt.Sprintf("t%d", t))
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

func (m *readonly) control(s *readonlyState) map[string]string {
	c := map[string]string{"phase": readonlyPhaseNames[s.Phase], "buffer": "{}"}
	if i := int(s.Cap.Plan.N) - 1; i >= 0 && s.Phase != readonlyIdle {
		l := &s.Cap.Log
		c["buffer"] = bufferString(&s.Cap.Plan.Units[i], s.Buf, m.cfg.Keys)
		c["low sample"] = fmt.Sprintf("G(%d) = %s", l.Offset(s.LowAt[i]), txnSetString(l.Executed(s.LowAt[i])))
		if s.Phase == readonlyHighSampled {
			c["high sample"] = fmt.Sprintf("G(%d) = %s", l.Offset(s.HighAt[i]), txnSetString(l.Executed(s.HighAt[i])))
		}
	}
	if s.Cap.Partial {
		var ev []string
		for _, e := range s.Pending.Events() {
			ev = append(ev, fmt.Sprintf("%v := %v", e.Key, e.Img))
		}
		c["pending"] = "{" + strings.Join(ev, ", ") + "}"
	}
	return c
}

func (m *readonly) Fields(s *readonlyState) []explore.Field {
	f := CaptureFields(&s.Cap, m.cfg.Keys)
	c := m.control(s)
	for _, name := range []string{"phase", "low sample", "high sample", "buffer", "pending"} {
		if v, ok := c[name]; ok {
			f = append(f, explore.Field{Name: name, Value: v})
		}
	}
	return f
}

func (m *readonly) View(s *readonlyState) any {
	v := CaptureView(&s.Cap, m.cfg.Keys)
	v.Control = m.control(s)
	return v
}
