package protocols

import (
	"fmt"
	"strings"

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

// sampleText renders the open chunk's sample at at, once it is in phase from.
func (m *readonly) sampleText(s *readonlyState, at []model.Coord, from readonlyPhase) (string, bool) {
	i := int(s.Cap.Plan.N) - 1
	if i < 0 || s.Phase < from {
		return "", false
	}
	l := &s.Cap.Log
	return fmt.Sprintf("G(%d) = %s", l.Offset(at[i]), txnSetString(l.Executed(at[i]))), true
}

// buffer renders the open chunk's buffered rows.
func (m *readonly) buffer(s *readonlyState) (string, bool) {
	if i := int(s.Cap.Plan.N) - 1; i >= 0 && s.Phase != readonlyIdle {
		return bufferString(&s.Cap.Plan.Units[i], s.Buf, m.cfg.Keys), true
	}
	return "{}", true
}

// pending renders the rows of a split transaction not yet appended.
func (m *readonly) pending(s *readonlyState) (string, bool) {
	if !s.Cap.Partial {
		return "", false
	}
	var ev []string
	for _, e := range s.Pending.Events() {
		ev = append(ev, fmt.Sprintf("%v := %v", e.Key, e.Img))
	}
	return "{" + strings.Join(ev, ", ") + "}", true
}
