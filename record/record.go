package record

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Prefix starts the name of every slot and publication this package creates,
// so Clean can tell them from others.
const Prefix = "cutcheck_"

// RunPrefix starts the id of every signal row this package writes: a run's
// rows are "cutcheck-<token>-…", where <token> is its slot's name without
// Prefix, so Clean can tell a live run's rows (its slot is active) from a
// killed run's.
const RunPrefix = "cutcheck-"

// Options configure one recording.
type Options struct {
	URL   string // the server, as a PostgreSQL URL or key=value string
	Table string // the table to back-fill, optionally schema-qualified
	// Key names the key columns (a unique not-null key) instead of the
	// primary key, as Debezium's message.key.columns does.
	Key         []string
	SignalTable string // the signalling table (created if missing); default debezium_signal
	ChunkSize   int    // rows per chunk; default 1024 (Debezium's default)
	Slot        string // the slot and publication name; default cutcheck_<random>
	Fault       string // an implementation mistake to make on purpose (Faults)
	// Populate creates the table (id bigint primary key, v integer, s text)
	// with keys 1..Populate when it does not exist.
	Populate int
	Workload Workload
	// Stall is how long the consumer waits with no WAL arriving, or for a
	// high watermark the stream has already passed, before it says the
	// capture is stuck (default one minute).
	Stall time.Duration
	// Wait bounds the wait, after each low watermark, for the transactions
	// of the table's database that were in progress when it committed
	// (default one minute); past it the run stops, naming the oldest.
	Wait time.Duration
	// Waiting, if set, is called every few seconds while the run waits for
	// such a transaction, with the oldest one still in progress.
	Waiting func(Waiter)
	// WindowHold waits this long between a chunk's read and its high
	// watermark, widening the window the workload can race (for tests).
	WindowHold time.Duration
	// inWindow, if set, runs between chunk i's read and its high watermark
	// (for tests: a write inside the window), and with i = 0 before chunk
	// 1's low watermark.
	inWindow func(ctx context.Context, i int) error
	// Schedule, if set, drives the run step by step through a model's
	// counterexample instead of the backfill loop (see schedule.go).
	Schedule *Schedule

	Bundle io.Writer // the evidence bundle
	Events io.Writer // Debezium change events, one a line (may be nil)
	// Notifications receives the incremental-snapshot notifications, one a
	// line, as Debezium's sink notification channel writes them (may be nil).
	Notifications io.Writer
	// Spool is the directory for the bundle's temporary parts (default: the
	// system's temporary directory).
	Spool string
}

// Stats report what a recording did.
type Stats struct {
	Rows      int64 // chunk rows read
	Checked   int64 // keys the table-oracle check compared (oracle.go)
	Bracketed int64 // changes of the table between the check's markers (outside writers)
	Chunks    int
	Positions int64 // log positions consumed
	Emitted   int64 // entries emitted
	Discarded int64 // buffered rows a window event touched: the race happened (a correct capture discards them)
	Survivors int64
	Txns      int64    // workload transactions committed
	Diff      []string // schedule runs: the keys where the sink at rest differs from the table
	Diverged  int64    // times the fault under test made the capture act otherwise than the correct one
	MaxKey    string   // as the bundle writes it
	Frontier  int64
	Elapsed   time.Duration
	MaxLag    time.Duration // the longest a high watermark took from its commit to the consumer
}

// Error is a failure to record, with the exit code class the command line
// maps it to: Usage for bad input (exit 2), else an I/O error (exit 3).
type Error struct {
	Usage  bool
	Stuck  bool // the capture waits for what will never come (exit 4)
	Oracle bool // the emitted stream differs from the table (exit 1); the outputs were written
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func usageErr(format string, a ...any) error {
	return &Error{Usage: true, Msg: oneLine(fmt.Sprintf(format, a...))}
}
func ioErr(format string, a ...any) error { return &Error{Msg: oneLine(fmt.Sprintf(format, a...))} }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Faults are the shipped mutations that are implementation choices of a
// window-discard capture, made on purpose so certify can be seen to catch them.
var Faults = []string{"no-discard", "copy-dropped", "late-start", "low-edge-off-by-one", "high-edge-off-by-one", "early-release", "lost-watermark"}

// connect opens a SQL connection and says in one line why it could not.
func connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err == nil {
		return c, nil
	}
	return nil, connErr(ctx, &cfg.Config, err)
}

// connErr says in one line why a connection could not be opened.
func connErr(ctx context.Context, cfg *pgconn.Config, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return ioErr("authentication failed for user %q: %s", cfg.User, pe.Message)
		case "3D000":
			return usageErr("database does not exist: %s", pe.Message)
		}
		return ioErr("cannot connect to the server: %s (%s)", pe.Message, pe.Code)
	}
	var ne net.Error
	if errors.As(err, &ne) || strings.Contains(err.Error(), "dial") {
		return ioErr("cannot reach the server at %s: %v", where(cfg), rootCause(err))
	}
	return ioErr("cannot connect to the server at %s: %v", where(cfg), rootCause(err))
}

func where(cfg *pgconn.Config) string {
	if strings.HasPrefix(cfg.Host, "/") {
		return fmt.Sprintf("socket %s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	return fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

func parseURL(url string) (*pgx.ConnConfig, error) {
	if url == "" {
		return nil, usageErr("--db is required (a PostgreSQL URL, e.g. postgres://user@localhost:5432/db)")
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, usageErr("--db: %v", rootCause(err))
	}
	cfg.ConnectTimeout = 10 * time.Second
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	return cfg, nil
}

// session is one recording's connections and the names it created.
type session struct {
	opt     Options
	cfg     *pgx.ConnConfig
	sql     *pgx.Conn      // watermarks and chunk reads
	repl    *pgconn.PgConn // the replication connection
	tab     *table
	sig     *table
	slot    string
	run     string // prefix of this run's signal row ids: RunPrefix + the slot's token
	pubMade bool
	sigMade bool
}

func newToken() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Record runs the backfill and writes the bundle and the events. Cancelling
// ctx (Ctrl-C) stops it; the slot, the publication and the signal rows are
// removed on every return.
func Record(ctx context.Context, opt Options) (st Stats, err error) {
	start := time.Now()
	if opt.ChunkSize == 0 {
		opt.ChunkSize = 1024
	}
	if opt.ChunkSize < 1 {
		return st, usageErr("--chunk-size must be at least 1, got %d", opt.ChunkSize)
	}
	if opt.SignalTable == "" {
		opt.SignalTable = "debezium_signal"
	}
	if opt.Stall == 0 {
		opt.Stall = time.Minute
	}
	if opt.Wait == 0 {
		opt.Wait = time.Minute
	}
	if opt.Table == "" {
		return st, usageErr("--table is required")
	}
	if opt.Fault != "" && !validFault(opt.Fault) {
		return st, usageErr("unknown fault %q (known: %s)", opt.Fault, strings.Join(Faults, ", "))
	}
	cfg, err := parseURL(opt.URL)
	if err != nil {
		return st, err
	}
	s := &session{opt: opt, cfg: cfg}
	s.slot = opt.Slot
	if s.slot == "" {
		s.slot = Prefix + newToken()
	}
	if !validName(s.slot) {
		return st, usageErr("slot name %q: use lower-case letters, digits and underscores (at most 63)", s.slot)
	}
	s.run = RunPrefix + strings.TrimPrefix(s.slot, Prefix)
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := s.prepare(ctx); err != nil {
		return st, err
	}
	c, err := s.startCapture(ctx)
	if err != nil {
		return st, err
	}
	defer c.spool.remove()
	var wl *workload
	if opt.Schedule == nil && opt.Workload.Rate != 0 {
		wl, err = startWorkload(ctx, s, c.maxKey)
		if err != nil {
			return st, err
		}
	}
	if opt.Schedule != nil {
		err = c.replay(ctx, opt.Schedule)
	} else {
		err = c.backfill(ctx)
	}
	if wl != nil {
		st.Txns = wl.stop()
	}
	var mismatch string
	if err == nil && opt.Schedule == nil {
		// The workload has stopped: the table is the oracle (oracle.go).
		mismatch, err = c.verify(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		return st, err
	}
	if err := c.finish(opt.Bundle); err != nil {
		return st, err
	}
	c.stats.Txns = st.Txns
	c.stats.Elapsed = time.Since(start)
	if mismatch != "" {
		return c.stats, &Error{Oracle: true, Msg: oneLine(mismatch)}
	}
	return c.stats, nil
}

func validFault(f string) bool {
	for _, g := range Faults {
		if g == f {
			return true
		}
	}
	return false
}

func validName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// prepare connects, checks the server and the table, and creates the
// signalling table and the publication.
func (s *session) prepare(ctx context.Context) error {
	var err error
	if s.sql, err = connect(ctx, s.cfg); err != nil {
		return err
	}
	var level string
	if err := s.sql.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return s.dbErr(ctx, "reading wal_level", err)
	}
	if level != "logical" {
		return ioErr("the server's wal_level is %q, not logical: set wal_level = logical in postgresql.conf (or ALTER SYSTEM SET wal_level = logical) and restart the server", level)
	}
	var inUse bool
	if err := s.sql.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", s.slot).Scan(&inUse); err != nil {
		return s.dbErr(ctx, "reading pg_replication_slots", err)
	}
	if inUse {
		return usageErr("replication slot %q is in use: choose another --slot (or drop it: SELECT pg_drop_replication_slot('%s'))", s.slot, s.slot)
	}
	if err := s.checkRole(ctx); err != nil {
		return err
	}
	if s.opt.Schedule != nil {
		if err := s.opt.Schedule.createTable(ctx, s.sql, s.opt.Table); err != nil {
			return err
		}
	} else if s.opt.Populate > 0 {
		if err := populate(ctx, s.sql, s.opt.Table, s.opt.Populate); err != nil {
			return err
		}
	}
	if s.tab, err = inspect(ctx, s.sql, s.opt.Table, s.opt.Key); err != nil {
		return err
	}
	if len(s.tab.key) == 0 {
		return usageErr("table %s has no primary key: the backfill chunks by it (or name a unique not-null key with --key)", s.tab.qname)
	}
	with, err := s.preflight(ctx)
	if err != nil {
		return err
	}
	if s.sig, err = s.signalTable(ctx); err != nil {
		return err
	}
	tables := s.tab.qname + ", " + s.sig.qname
	if s.opt.Fault == "lost-watermark" {
		tables = s.tab.qname // an include list without the signalling table (§7.3 W3/W4)
	}
	if _, err := s.sql.Exec(ctx, fmt.Sprintf("CREATE PUBLICATION %s FOR TABLE %s%s", s.slot, tables, with)); err != nil {
		return s.dbErr(ctx, "creating the publication", err)
	}
	s.pubMade = true
	return nil
}

// signalComment marks a signalling table record created, for Clean.
const signalComment = "created by cutcheck record"

// signalTable creates the signalling table if it is missing (Debezium's
// layout: id, type, data), marked with signalComment so that the run, or
// Clean after a killed run, drops it once it is empty.
func (s *session) signalTable(ctx context.Context) (*table, error) {
	q := quoteQualified(s.opt.SignalTable)
	var exists bool
	if err := s.sql.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", q).Scan(&exists); err != nil {
		return nil, s.dbErr(ctx, "looking up the signalling table "+s.opt.SignalTable, err)
	}
	if !exists {
		_, err := s.sql.Exec(ctx, "CREATE TABLE "+q+" (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && pe.Code == "42P07": // another run made it meanwhile
		case err != nil:
			return nil, s.dbErr(ctx, "creating the signalling table "+s.opt.SignalTable, err)
		default:
			s.sigMade = true
			if _, err := s.sql.Exec(ctx, "COMMENT ON TABLE "+q+" IS '"+signalComment+"'"); err != nil {
				return nil, s.dbErr(ctx, "marking the signalling table "+s.opt.SignalTable, err)
			}
		}
	}
	t, err := inspect(ctx, s.sql, s.opt.SignalTable, nil)
	if s.sigMade && t != nil {
		s.sig = t // dropped on close, even if the checks below fail
	}
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"id", "type"} {
		if t.col(name) < 0 {
			return nil, usageErr("signalling table %s has no column %q (expected id, type, data)", t.qname, name)
		}
	}
	return t, nil
}

// dbErr turns a server error into one line; a cancelled context stays so.
func (s *session) dbErr(ctx context.Context, doing string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return ioErr("%s: %s (%s)", doing, pe.Message, pe.Code)
	}
	return ioErr("%s: %v", doing, rootCause(err))
}

// close removes what the run created, with its own deadline: it runs after
// Ctrl-C too, when the run's context is already cancelled.
func (s *session) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var errs []string
	if s.repl != nil {
		// The slot is temporary: ending its connection drops it.
		s.repl.Close(ctx)
	}
	if s.sql == nil || s.sql.IsClosed() {
		if s.sql != nil || s.pubMade {
			if c, err := connect(ctx, s.cfg); err == nil {
				s.sql = c
			}
		}
	}
	if s.sql != nil && !s.sql.IsClosed() {
		if s.pubMade {
			if _, err := s.sql.Exec(ctx, "DROP PUBLICATION IF EXISTS "+s.slot); err != nil {
				errs = append(errs, "dropping publication "+s.slot+": "+err.Error())
			}
		}
		if s.sig != nil {
			if _, err := s.sql.Exec(ctx, "DELETE FROM "+s.sig.qname+" WHERE id LIKE $1", s.run+"-%"); err != nil {
				errs = append(errs, "deleting signal rows: "+err.Error())
			}
			if s.sigMade {
				if _, err := dropIfEmpty(ctx, s.sql, s.sig.qname); err != nil {
					errs = append(errs, "dropping the signalling table it created: "+err.Error())
				}
			}
		}
		// A slot of ours that outlived its connection (it should not).
		s.sql.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", s.slot)
		s.sql.Close(ctx)
	}
	if len(errs) > 0 {
		return ioErr("cleaning up: %s", strings.Join(errs, "; "))
	}
	return nil
}

// startReplication opens the replication connection, creates the temporary
// slot and starts pgoutput from its consistent point.
func (s *session) startReplication(ctx context.Context) error {
	rc := s.cfg.Config.Copy()
	if rc.RuntimeParams == nil {
		rc.RuntimeParams = map[string]string{}
	}
	rc.RuntimeParams["replication"] = "database"
	c, err := pgconn.ConnectConfig(ctx, rc)
	if err != nil {
		return connErr(ctx, rc, err)
	}
	s.repl = c
	res, err := pglogrepl.CreateReplicationSlot(ctx, c, s.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, SnapshotAction: "NOEXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42710" {
			return usageErr("replication slot %q is in use: choose another --slot", s.slot)
		}
		return s.dbErr(ctx, "creating the replication slot", err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return ioErr("the slot's consistent point %q: %v", res.ConsistentPoint, err)
	}
	err = pglogrepl.StartReplication(ctx, c, s.slot, lsn, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + s.slot + "'"}})
	if err != nil {
		return s.dbErr(ctx, "starting replication", err)
	}
	return nil
}
