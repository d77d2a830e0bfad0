package record

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Clean removes what killed runs of this tool left in the database of url:
// replication slots named with Prefix that no connection uses (a slot
// retains WAL until the disk fills), publications named with Prefix whose
// slot is gone or idle, signal rows (ids starting with RunPrefix) of runs
// whose slot is not active, in the signalling tables record created and in
// signalTable, and the signalling tables record created once empty. It
// returns what it removed, one line each.
func Clean(ctx context.Context, url, signalTable string) (done []string, err error) {
	cfg, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	s := &session{sql: c}
	names, err := strings1(ctx, c, `SELECT 'slot ' || slot_name FROM pg_replication_slots WHERE slot_name LIKE 'cutcheck\_%' AND NOT active AND database = current_database()
		UNION ALL SELECT 'publication ' || pubname FROM pg_publication p WHERE pubname LIKE 'cutcheck\_%'
		AND NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.slot_name = p.pubname AND s.active) ORDER BY 1`)
	if err != nil {
		return nil, s.dbErr(ctx, "listing slots and publications", err)
	}
	for _, n := range names {
		var q string
		var arg []any
		if name, ok := strings.CutPrefix(n, "slot "); ok {
			q, arg = "SELECT pg_drop_replication_slot($1)", []any{name}
		} else {
			name, _ := strings.CutPrefix(n, "publication ")
			q = "DROP PUBLICATION IF EXISTS " + quoteIdent(name)
		}
		if _, err := c.Exec(ctx, q, arg...); err != nil {
			return done, s.dbErr(ctx, "dropping "+n, err)
		}
		done = append(done, "dropped "+n)
	}
	// The signalling tables: those record created, and the one named.
	tables, err := strings1(ctx, c, `SELECT c.oid::regclass::text FROM pg_class c WHERE c.relkind = 'r' AND obj_description(c.oid, 'pg_class') = $1
		UNION SELECT to_regclass($2)::text WHERE to_regclass($2) IS NOT NULL ORDER BY 1`, signalComment, quoteQualified(signalTable))
	if err != nil {
		return done, s.dbErr(ctx, "listing the signalling tables", err)
	}
	for _, t := range tables {
		// A run's rows are "cutcheck-<token>-…"; its slot is cutcheck_<token>
		// (or <token>, a --slot of its own).
		tag, err := c.Exec(ctx, `DELETE FROM `+t+` WHERE id LIKE 'cutcheck-%' AND NOT EXISTS (SELECT 1 FROM pg_replication_slots s
			WHERE s.active AND s.slot_name IN ('cutcheck_' || split_part(id, '-', 2), split_part(id, '-', 2)))`)
		if err != nil {
			if pgMsg(err) != "" && strings.Contains(pgMsg(err), "42703") {
				continue // not a signalling table: no id column
			}
			return done, s.dbErr(ctx, "deleting signal rows from "+t, err)
		}
		if n := tag.RowsAffected(); n > 0 {
			done = append(done, fmt.Sprintf("deleted %d signal rows of killed runs from %s", n, t))
		}
	}
	made, err := strings1(ctx, c, `SELECT c.oid::regclass::text FROM pg_class c WHERE c.relkind = 'r' AND obj_description(c.oid, 'pg_class') = $1 ORDER BY 1`, signalComment)
	if err != nil {
		return done, s.dbErr(ctx, "listing the signalling tables", err)
	}
	for _, t := range made {
		dropped, err := dropIfEmpty(ctx, c, t)
		if err != nil {
			return done, s.dbErr(ctx, "dropping the signalling table "+t, err)
		}
		if dropped {
			done = append(done, "dropped table "+t+", an empty signalling table record created")
		}
	}
	return done, nil
}

func strings1(ctx context.Context, c *pgx.Conn, q string, args ...any) ([]string, error) {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Leftover is a temporary file a killed record run left.
type Leftover struct {
	Path  string
	Bytes int64
	PID   int
}

// CleanFiles removes the spool files (SpoolPrefix<pid>-…) in dir (default:
// the system's temporary directory) of record processes that are gone.
func CleanFiles(dir string) ([]Leftover, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	paths, _ := filepath.Glob(filepath.Join(dir, SpoolPrefix+"*"))
	var out []Leftover
	for _, p := range paths {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(p), SpoolPrefix), "-", 2)[0])
		if err != nil || running(pid) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(p); err != nil {
			return out, ioErr("removing %s: %v", p, rootCause(err))
		}
		out = append(out, Leftover{Path: p, Bytes: fi.Size(), PID: pid})
	}
	return out, nil
}

// running says whether process pid is alive on this machine.
func running(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
