package record

import (
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
)

// A capture is stuck when it waits for what will never come. Two signs,
// neither of which a long transaction gives: no WAL reaches the consumer
// for --stall (the server sends a keepalive with its read position each
// time the consumer acknowledges, and that position advances while the
// server decodes a large transaction, before any of its rows is sent); or
// the server has read the WAL past a high watermark this run wrote and the
// watermark has not come for --stall (its table is not published: the
// lost-watermark fault, §7.3 W3/W4).

// walSent notes a WAL position the server reported; an advance is WAL
// arriving.
func (c *capture) walSent(end pglogrepl.LSN) {
	if end > c.walEnd {
		c.walEnd = end
		c.walAt = time.Now()
	}
}

// stalled says whether the capture is stuck; entered is when the consumer
// began waiting for its next position.
func (c *capture) stalled(entered time.Time) error {
	stall := c.s.opt.Stall
	if c.cur > 0 && !c.open && !c.highAt.IsZero() && c.units[c.cur-1].hi < 0 && c.walEnd >= c.hiLSN && time.Since(c.highAt) > stall {
		return &Error{Stuck: true, Msg: fmt.Sprintf("chunk %d's watermarks did not reach the consumer within %s of its high watermark, though the server has sent the WAL past it: the capture would wait forever (is the signalling table %s in the publication?)", c.cur, stall, c.sig.qname)}
	}
	quiet := c.walAt
	if entered.After(quiet) {
		quiet = entered
	}
	if time.Since(quiet) > stall {
		return &Error{Stuck: true, Msg: fmt.Sprintf("no WAL reached the consumer for %s: the capture would wait forever", stall)}
	}
	return nil
}
