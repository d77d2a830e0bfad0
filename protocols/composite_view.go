package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/model"
)

// provenance names how chunk ch's refresh is obtained (Figure 3, Example 5.1).
func (m *composite) provenance(ch int) string {
	switch {
	case m.tablesync:
		return "per-table dump"
	case ch == 0:
		return "chunked scan"
	case ch == 1:
		return "native dump"
	}
	return "point select"
}

func (m *composite) Describe(s *compositeState, a compositeAction) string {
	c := &s.Cap
	n := c.Log.Len()
	at := c.Log.Offset // positions as the log names them
	switch a.Kind {
	case compCommit:
		return DescribeCommit(&c.Log, a.Txn)
	case compRecordLo:
		return fmt.Sprintf("record lo for chunk 1 (chunked scan) %s at %d", KeySetString(m.domain[0], m.cfg.Keys), at(n))
	case compRead:
		t := *s
		m.Next(s, a, &t)
		i := m.scanUnit(&t)
		k := nextKey(&c.Plan.Units[i])
		d := fmt.Sprintf("read chunk 1's %v = %v at coordinate %d", k, c.Log.Sigma(a.At, k), at(a.At))
		if a.At != n {
			d += fmt.Sprintf(" (log end %d)", at(n))
		}
		return d + ", buffer " + bufferString(&t.Cap.Plan.Units[i], t.Buf&m.domain[0], m.cfg.Keys)
	case compRecordHi:
		return fmt.Sprintf("record hi for chunk 1 at %d: bracket (%d, %d]", at(n), at(c.Plan.Units[m.scanUnit(s)].Lo), at(n))
	case compSplice:
		d := m.domain[a.Unit]
		return fmt.Sprintf("splice chunk %d (%s) %s at recorded r = %d: %s", a.Unit+1, m.provenance(int(a.Unit)), KeySetString(d, m.cfg.Keys), at(n), m.readsText(&c.Log, d, n))
	case compClose:
		u := &c.Plan.Units[a.Unit]
		what := bufferString(u, s.Buf&u.Domain, m.cfg.Keys)
		switch {
		case s.Buf&u.Domain == 0:
			what = "nothing (no row buffered)"
		case m.cfg.Fault == CopyDropped:
			what = "nothing (the copy is dropped; buffered " + what + ")"
		default:
			what += fmt.Sprintf(" tagged %d", at(u.Hi))
		}
		return fmt.Sprintf("close chunk %d at %d: emit %s", s.Chunk[a.Unit]+1, at(u.Hi), what)
	case compConsume:
		p := c.Pos + 1
		e := c.Log.At(p)
		text := fmt.Sprintf("consume position %d: %v := %v", at(p), e.Key, e.Img)
		if w, ok := outsideWords(&m.cfg, c, e); ok {
			return text + w
		}
		if i := c.Plan.Owner(e.Key); e.Key != model.NoKey && i >= 0 && !c.UnitClosed(i) && m.inWindow(s, i, p) {
			text += fmt.Sprintf(", in chunk %d's window", s.Chunk[i]+1)
			switch {
			case s.Buf.Has(e.Key) && !m.parts.Discard.discards(c, i, p):
				text += fmt.Sprintf(", keeps buffered %v=%v", e.Key, c.Plan.Units[i].Refresh[e.Key]) + m.parts.Discard.words()
			case s.Buf.Has(e.Key):
				text += fmt.Sprintf(", discards buffered %v=%v", e.Key, c.Plan.Units[i].Refresh[e.Key]) + m.parts.Discard.words()
			}
		}
		return text + ", emitted"
	case compStartLater:
		return DescribeStartLater(c)
	case compClaim:
		return fmt.Sprintf("claim the trajectory from an early common onset c* = %d (frontier %d, latest high %d)", at(a.At), at(c.Pos), at(c.Plan.LatestHigh()))
	}
	return "?"
}

// readsText lists σ_at over the keys of d: "k1=2 k2=⊥".
func (m *composite) readsText(l *model.Log, d model.KeySet, at model.Coord) string {
	var out []string
	for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
		if d.Has(k) {
			out = append(out, fmt.Sprintf("%v=%v", k, l.Sigma(at, k)))
		}
	}
	return strings.Join(out, " ")
}

func (m *composite) ActionNames() []string {
	names := make([]string, len(m.kinds))
	for i, k := range m.kinds {
		names[i] = compositeKindNames[k]
	}
	return names
}

func (m *composite) ActionKind(a compositeAction) int { return m.kindIndex[a.Kind] }

// bufferText renders every open unit's buffered rows: "{k0=1 k2=2}".
func (m *composite) bufferText(s *compositeState) string {
	var out []string
	for i := 0; i < int(s.Cap.Plan.N); i++ {
		u := &s.Cap.Plan.Units[i]
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if s.Buf.Has(k) && u.Domain.Has(k) {
				out = append(out, fmt.Sprintf("%v=%v", k, u.Refresh[k]))
			}
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

func (m *composite) modeName() string {
	if m.tablesync {
		return CompositeTablesync
	}
	return CompositeMixed
}

// onsetText renders the claimed onset c*, once claimed.
func (m *composite) onsetText(s *compositeState) (string, bool) {
	return fmt.Sprint(s.Cap.Log.Offset(s.Onset - 1)), s.Onset != 0
}
