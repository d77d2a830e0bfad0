package protocols

import (
	"fmt"
	"strings"

	"github.com/cutcheck/cutcheck/model"
)

func (m *dump) Describe(s *dumpState, a dumpAction) string {
	c := &s.Cap
	n := c.Log.Len()
	at := c.Log.Offset // positions as the log names them
	switch a.Kind {
	case dumpCommit:
		return DescribeCommit(&c.Log, a.Txn)
	case dumpSplice:
		t := *s
		m.Next(s, a, &t)
		return fmt.Sprintf("dump every key at recorded r = %d (point bracket): %s, buffer %s", at(n), dumpReadsText(&c.Log, n, m.cfg.Keys), bufferString(&t.Cap.Plan.Units[0], t.Buf, m.cfg.Keys))
	case dumpReadAt:
		t := *s
		m.Next(s, a, &t)
		return fmt.Sprintf("dump reads every key at view %d (r not recorded yet): %s, buffer %s", at(n), dumpReadsText(&c.Log, n, m.cfg.Keys), bufferString(&t.Cap.Plan.Units[0], t.Buf, m.cfg.Keys))
	case dumpRecordR:
		return fmt.Sprintf("record recovery point r = %d (the dump's view was %d)", at(n), at(c.ReadAt[0]))
	case dumpRecordB:
		return fmt.Sprintf("record backup start b = %d", at(n))
	case dumpRestore:
		return fmt.Sprintf("the backup's consistent view, at latent v = %d: %s", at(n), dumpReadsText(&c.Log, n, m.cfg.Keys))
	case dumpArrive:
		t := *s
		m.Next(s, a, &t)
		u := &c.Plan.Units[0]
		d := "the restored rows arrive: buffer " + bufferString(u, t.Buf, m.cfg.Keys)
		if dropped := u.Present() & s.Gone; dropped != 0 {
			d += ", dropped " + bufferString(u, dropped, m.cfg.Keys) + " (window event already met)"
		}
		return d
	case dumpRecordE:
		return fmt.Sprintf("record recovery end e = %d: bracket (%d, %d]", at(n), at(c.Plan.Units[0].Lo), at(n))
	case dumpClose:
		u := &c.Plan.Units[0]
		if m.cfg.Fault == CopyDropped && s.Buf != 0 {
			return fmt.Sprintf("close the unit at %d: emit nothing, dropping the buffer %s", at(u.Hi), bufferString(u, s.Buf, m.cfg.Keys))
		}
		return fmt.Sprintf("close the unit at %d: emit %s", at(u.Hi), dumpEmitText(&c.Log, u, s.Buf, m.cfg.Keys))
	case dumpConsume:
		t := *s
		m.Next(s, a, &t)
		return "consume " + m.describeConsume(s, &t)
	case dumpStartLater:
		return DescribeStartLater(c)
	}
	return "?"
}

// describeConsume says what consuming the next position did.
func (m *dump) describeConsume(s, t *dumpState) string {
	p := s.Cap.Pos + 1
	e := s.Cap.Log.At(p)
	d := fmt.Sprintf("position %d: %v := %v", s.Cap.Log.Offset(p), e.Key, e.Img)
	if w, ok := outsideWords(&m.cfg, &s.Cap, e); ok {
		return d + w
	}
	if m.inWindow(s, p) {
		d += fmt.Sprintf(" in window (%d, e]", s.Cap.Log.Offset(s.Cap.Plan.Units[0].Lo))
		switch {
		case s.Buf.Has(e.Key) && !t.Buf.Has(e.Key):
			d += fmt.Sprintf(", discards buffered %v", e.Key)
		case s.Buf.Has(e.Key):
			d += fmt.Sprintf(", does not discard buffered %v", e.Key)
		case !t.Gone.Has(e.Key) && !s.Arrived:
			d += fmt.Sprintf(", not remembered for %v's row still to arrive", e.Key)
		case !s.Arrived:
			d += fmt.Sprintf(", %v's row will be dropped when it arrives", e.Key)
		}
	}
	return d + ", emitted"
}

func (m *dump) ActionNames() []string {
	names := make([]string, len(m.kinds))
	for i, k := range m.kinds {
		names[i] = dumpKindNames[k]
	}
	return names
}

func (m *dump) ActionKind(a dumpAction) int { return m.kindIndex[a.Kind] }

// bufferField: the buffered rows, or the keys whose rows will be dropped on
// arrival.
func (m *dump) bufferField(s *dumpState) string {
	if s.Cap.Plan.N == 0 {
		return "{}"
	}
	if !s.Arrived {
		var ks []string
		for k := model.Key(0); k < model.Key(m.cfg.Keys); k++ {
			if s.Gone.Has(k) {
				ks = append(ks, k.String())
			}
		}
		return "not arrived; drop {" + strings.Join(ks, " ") + "}"
	}
	return bufferString(&s.Cap.Plan.Units[0], s.Buf, m.cfg.Keys)
}

func (m *dump) modeName() string {
	if m.uncertain {
		return DumpUncertain
	}
	return DumpTrusted
}

// dumpReadsText lists σ_at over the first keys: "k0=1 k1=⊥".
func dumpReadsText(l *model.Log, at model.Coord, keys int) string {
	s := ""
	for k := model.Key(0); k < model.Key(keys); k++ {
		if k > 0 {
			s += " "
		}
		s += fmt.Sprintf("%v=%v", k, l.Sigma(at, k))
	}
	return s
}

// dumpEmitText lists the entries a close emits for the keys of set:
// "k0=2@3 k1=1@3", or "nothing" (tags as l names them).
func dumpEmitText(l *model.Log, u *model.Unit, set model.KeySet, keys int) string {
	s := ""
	for k := model.Key(0); k < model.Key(keys); k++ {
		if set.Has(k) {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%v=%v@%d", k, u.Refresh[k], l.Offset(u.Hi))
		}
	}
	if s == "" {
		return "nothing"
	}
	return s
}
