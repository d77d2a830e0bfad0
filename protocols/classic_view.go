package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/model"
)

func (m *classic) ActionNames() []string { return classicActionNames }

func (m *classic) ActionKind(a classicAction) int { return int(a.Kind) }

func (m *classic) Describe(s *classicState, a classicAction) string {
	l := &s.Cap.Log
	next := l.Offset(l.Len() + 1) // positions as the log names them
	switch a.Kind {
	case classicCommit:
		return DescribeCommit(l, a.Txn)
	case classicWriteLow:
		return fmt.Sprintf("write low watermark for chunk %d at position %d", s.Cap.Plan.N+1, next)
	case classicReadChunk:
		t := *s
		m.Next(s, a, &t)
		u := &t.Cap.Plan.Units[t.Cap.Plan.N-1]
		var rs []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if u.Domain.Has(k) {
				rs = append(rs, fmt.Sprintf("%v=%v", k, u.Refresh[k]))
			}
		}
		what := "read chunk %d at position %d: %s"
		if m.cfg.Fault == ScanSkipsRow {
			what = "read chunk %d at position %d, skipping its first present row: %s"
		}
		return fmt.Sprintf(what, s.Cap.Plan.N, l.Offset(l.Len()), strings.Join(rs, " "))
	case classicWriteHigh:
		d := fmt.Sprintf("write high watermark for chunk %d at position %d", s.Cap.Plan.N, next)
		if i := int(s.Cap.Plan.N) - 1; m.openUnit(s) == i {
			d += ", the select's rows enter the open window's buffer " + bufferString(&s.Cap.Plan.Units[i], s.Cap.Plan.Units[i].Present(), m.cfg.Keys)
		}
		if m.parts.ReleaseAtHighWrite {
			t := *s
			m.Next(s, a, &t)
			d += ", release chunk: emit " + DescribeEmitted(&s.Cap, &t.Cap, m.cfg.Keys)
		}
		return d
	case classicConsume:
		t := *s
		m.Next(s, a, &t)
		return "consume " + m.describeConsume(s, &t)
	case classicStartLater:
		d := DescribeStartLater(&s.Cap)
		switch {
		case s.Cap.Log.At(s.Cap.Pos+1).Key != model.NoKey:
		case m.cfg.Fault == MarkerOnlyFromStream:
			d += " (the consumer never meets chunk 1's low watermark: its window stays shut)"
		default:
			d += " (the capture still handles its own watermark there: chunk 1's window opens)"
		}
		return d
	}
	return "?"
}

// describeConsume says what consuming the next position did.
func (m *classic) describeConsume(s, t *classicState) string {
	p := s.Cap.Pos + 1
	e, at := s.Cap.Log.At(p), s.Cap.Log.Offset(p)
	if e.Key == model.NoKey {
		i, high := markerChunk(e)
		switch {
		case m.cfg.Fault == LostWatermark:
			return fmt.Sprintf("position %d: %s filtered out of the consumed log (never seen)", at, MarkerName(e.Img))
		case s.Cap.UnitClosed(i):
			return fmt.Sprintf("position %d: %s of closed chunk %d, ignored", at, MarkerName(e.Img), i+1)
		case !high && s.Phase != classicHighWritten:
			return fmt.Sprintf("position %d: low watermark, chunk %d's window opens before its select has returned, buffer {}", at, i+1)
		case !high:
			return fmt.Sprintf("position %d: low watermark, chunk %d's window opens, buffer %s", at, i+1, bufferString(&s.Cap.Plan.Units[i], t.Buf, m.cfg.Keys))
		default:
			return fmt.Sprintf("position %d: high watermark, close chunk %d: emit survivors %s", at, i+1, DescribeEmitted(&s.Cap, &t.Cap, m.cfg.Keys))
		}
	}
	d := fmt.Sprintf("position %d: %v := %v", at, e.Key, e.Img)
	if w, ok := outsideWords(&m.cfg, &s.Cap, e); ok {
		return d + w
	}
	if i := m.openUnit(s); i >= 0 {
		switch {
		case s.Buf.Has(e.Key) && !t.Buf.Has(e.Key):
			d += fmt.Sprintf(" in window, discards buffered %v", e.Key) + m.parts.Discard.words()
		case s.Buf.Has(e.Key) && m.parts.Discard != nil && m.window(&s.Cap.Plan.Units[i]).Contains(p):
			d += fmt.Sprintf(" in window, buffered %v kept", e.Key) + m.parts.Discard.words()
		case s.Buf.Has(e.Key):
			d += fmt.Sprintf(" (buffered %v kept)", e.Key)
		case m.window(&s.Cap.Plan.Units[i]).Contains(p):
			d += " in window"
		}
	}
	return d + ", emitted"
}

func (m *classic) bufferField(s *classicState) string {
	if i := m.openUnit(s); i >= 0 {
		return bufferString(&s.Cap.Plan.Units[i], s.Buf, m.cfg.Keys)
	}
	return "{}"
}
