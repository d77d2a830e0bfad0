package record

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Waiter is a transaction the run waits for (Options.Waiting).
type Waiter struct {
	PID int    // its backend, 0 for a prepared transaction
	Xid string // its transaction id
	Age time.Duration
}

// awaitVisible waits until every transaction of the table's database in
// progress when the low watermark committed has ended. PostgreSQL makes a
// commit visible a moment after writing its commit record, so a
// transaction ordered before the low watermark in the log can still be
// invisible to the chunk's select: the read would then be stale at every
// coordinate of its bracket (O2), and the survivor would overwrite the
// newer value the stream already delivered — a lost update. Waiting for the
// snapshot's in-progress set closes that gap. Only the table's database
// can change the table: a transaction elsewhere is not waited for (a
// transaction's own lock on its xid says which backend, and so which
// database, holds it). The wait is bounded by Options.Wait and reported
// through Options.Waiting.
func (c *capture) awaitVisible(ctx context.Context) error {
	rows, err := c.s.sql.Query(ctx, `SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) x
		WHERE EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'transactionid' AND l.granted AND l.transactionid = xid(x) AND a.datname = current_database())
		OR EXISTS (SELECT 1 FROM pg_prepared_xacts p WHERE p.transaction = xid(x) AND p.database = current_database())`)
	var xip []string
	if err == nil {
		xip, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return c.s.dbErr(ctx, "reading the transactions in progress", err)
	}
	start := time.Now()
	nextReport := start.Add(2 * time.Second)
	pause := time.Millisecond
	for len(xip) > 0 {
		var n int
		if err := c.s.sql.QueryRow(ctx, "SELECT count(*) FROM unnest($1::text[]) x WHERE pg_xact_status(x::xid8) = 'in progress'", xip).Scan(&n); err != nil {
			return c.s.dbErr(ctx, "waiting for the transactions in progress", err)
		}
		if n == 0 {
			return nil
		}
		waited := time.Since(start)
		if waited > c.s.opt.Wait || c.s.opt.Waiting != nil && time.Now().After(nextReport) {
			w, err := c.oldest(ctx, xip, waited)
			if err != nil {
				return err
			}
			if w.Xid == "" {
				continue // they ended since
			}
			if waited > c.s.opt.Wait {
				who := fmt.Sprintf("pid %d", w.PID)
				if w.PID == 0 {
					who = "a prepared transaction"
				}
				return &Error{Stuck: true, Msg: fmt.Sprintf("transaction %s (%s, open for %s) in database %s did not end within --wait %s: a chunk read before it ends could miss its commit; end it or give a longer --wait",
					w.Xid, who, w.Age.Round(time.Second), c.s.cfg.Database, c.s.opt.Wait)}
			}
			c.s.opt.Waiting(w)
			nextReport = time.Now().Add(5 * time.Second)
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
	return nil
}

// oldest is the longest-open transaction of xip still in progress; its age
// is at least how long the run has waited for it.
func (c *capture) oldest(ctx context.Context, xip []string, waited time.Duration) (Waiter, error) {
	var w Waiter
	var secs float64
	err := c.s.sql.QueryRow(ctx, `SELECT x::text, COALESCE(l.pid, 0), COALESCE(extract(epoch FROM now() - a.xact_start), 0)::float8
		FROM unnest($1::text[]) x
		LEFT JOIN pg_locks l ON l.locktype = 'transactionid' AND l.granted AND l.transactionid = xid(x::xid8)
		LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE pg_xact_status(x::xid8) = 'in progress' ORDER BY 3 DESC, 1 LIMIT 1`, xip).Scan(&w.Xid, &w.PID, &secs)
	if err == pgx.ErrNoRows {
		return Waiter{Age: waited}, nil
	}
	if err != nil {
		return w, c.s.dbErr(ctx, "reading the transactions in progress", err)
	}
	w.Age = max(time.Duration(secs*float64(time.Second)), waited)
	return w, nil
}
