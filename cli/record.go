package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/record"
)

// helpNotes are said by `help COMMAND` after its summary.
var helpNotes = map[string]string{
	"record": `What record writes, and where:
  - the table: nothing, unless --workload RATE runs a workload of inserts, updates and
    deletes against it, or --populate N creates it (only if it does not exist);
  - the signalling table (--signal-table): this run's rows only, ids cutcheck-<token>-...,
    deleted at the end; the table itself if it is missing (marked by its comment, and
    dropped at the end when empty);
  - the server: a temporary replication slot and a publication, both cutcheck_<token>
    (or --slot), removed at the end;
  - files: --bundle, --events, --notifications, each written to a temporary name beside it
    (.NAME.tmp-PID-...) and renamed when whole; the spool (cutcheck-record-PID-...) in the
    system's temporary directory, removed at the end.
After a kill -9, 'cutcheck clean --db URL' removes what was left on the server and
'cutcheck clean' the files (--outputs DIR for the outputs' directory).
At the end of a backfill the table is the oracle: the emitted stream must agree with a
read of the whole table (exit 1 naming the first key and column where it does not; the
files are written and say what the run saw, which is not the table).`,
}

type recordOpts struct {
	opt                                     record.Options
	bundle, events, notifications, schedule string
}

func recordFlags() (*pflag.FlagSet, *recordOpts) {
	o := &recordOpts{}
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	fs.StringVar(&o.opt.URL, "db", "", "the PostgreSQL server (URL or key=value string); wal_level must be logical")
	fs.StringVar(&o.opt.Table, "table", "", "the table to back-fill (schema.table): any built-in column type, arrays, enums, domains, ranges and composite types; "+
		"keyed by its primary key (integers, numeric, text, varchar, uuid, date, time, timestamp, timestamptz, or several of these), chunked in that order (text COLLATE \"C\"); record only reads it unless --workload is given")
	fs.StringSliceVar(&o.opt.Key, "key", nil, "the key columns (a,b): a unique not-null key to chunk by instead of the primary key (Debezium's message.key.columns)")
	fs.StringVar(&o.bundle, "bundle", "", "write the evidence bundle (certify/FORMAT.md) to this file")
	fs.StringVar(&o.events, "events", "", "write the emitted stream as Debezium PostgreSQL change events (JSON Lines) to this file")
	fs.StringVar(&o.notifications, "notifications", "", "write the incremental-snapshot notifications, as Debezium's sink notification channel writes them (JSON Lines), to this file")
	fs.IntVar(&o.opt.ChunkSize, "chunk-size", 1024, "rows per chunk")
	fs.StringVar(&o.opt.SignalTable, "signal-table", "debezium_signal", "the signalling table for the watermark rows (created if missing)")
	fs.StringVar(&o.opt.Slot, "slot", "", "the replication slot and publication name (default cutcheck_<random>)")
	fs.StringVar(&o.opt.Fault, "fault", "", "make an implementation mistake on purpose: "+strings.Join(record.Faults, ", "))
	fs.IntVar(&o.opt.Populate, "populate", 0, "create the table (id bigint primary key, v integer, s text) with keys 1..N if it does not exist")
	fs.Int64Var(&o.opt.Workload.Seed, "seed", 1, "the workload's seed (with --workload)")
	fs.IntVar(&o.opt.Workload.Rate, "workload", 0, "write to the table while recording: a seeded workload of inserts, updates and deletes at `RATE` transactions per second (-1: as fast as it goes); without it the table is only read")
	fs.Int("rate", 0, "replaced by --workload")
	fs.MarkHidden("rate")
	fs.IntVar(&o.opt.Workload.Clients, "clients", 2, "workload connections (with --workload)")
	fs.IntVar(&o.opt.Workload.MaxRows, "rows", 3, "rows per workload transaction, at most (with --workload)")
	fs.DurationVar(&o.opt.Stall, "stall", time.Minute, "say the capture is stuck (exit 4) when no WAL arrives for this long, or a high watermark the server has sent past does not")
	fs.DurationVar(&o.opt.Wait, "wait", time.Minute, "wait at most this long, after a low watermark, for a transaction of the table's database in progress when it committed (exit 4 past it)")
	fs.DurationVar(&o.opt.WindowHold, "window-hold", 0, "wait this long between a chunk's read and its high watermark (widens the race)")
	fs.StringVar(&o.schedule, "schedule", "", "drive the run through a counterexample (check --trace-json) instead of the backfill loop")
	return fs, o
}

// runRecord is `cutcheck record`: a watermark backfill of a real table,
// recorded as evidence for certify.
func runRecord(args []string, stdout, stderr io.Writer) int {
	fs, o := recordFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "record", "takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	switch {
	case o.opt.URL == "":
		return usageErr(stderr, "record", "--db is required")
	case o.opt.Table == "" && o.schedule == "":
		return usageErr(stderr, "record", "--table is required")
	case o.bundle == "" && o.events == "":
		return usageErr(stderr, "record", "give --bundle FILE (and/or --events FILE)")
	case o.notifications != "" && o.schedule != "":
		return usageErr(stderr, "record", "--notifications is for a backfill: a schedule replays a trace's chunks, not Debezium's incremental snapshot")
	case o.opt.ChunkSize < 1:
		return usageErr(stderr, "record", "--chunk-size must be at least 1, got %d", o.opt.ChunkSize)
	case fs.Changed("rate"):
		return usageErr(stderr, "record", "--rate is replaced by --workload RATE: record writes to the table only when asked")
	case fs.Changed("workload") && o.opt.Workload.Rate == 0:
		return usageErr(stderr, "record", "--workload 0 runs no workload: leave it out, or give a rate (-1: as fast as it goes)")
	case o.opt.Wait <= 0:
		return usageErr(stderr, "record", "--wait must be positive, got %s", o.opt.Wait)
	}
	if !fs.Changed("workload") {
		for _, f := range []string{"clients", "rows", "seed"} {
			if fs.Changed(f) {
				return usageErr(stderr, "record", "--%s is for the workload: give --workload RATE too", f)
			}
		}
	}
	for _, out := range []struct{ flag, path string }{{"--bundle", o.bundle}, {"--events", o.events}, {"--notifications", o.notifications}} {
		if out.path == "" || out.path == "-" {
			continue
		}
		// refused, not created: a missing directory is most likely a typo
		if dir := filepath.Dir(out.path); dir != "" {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usageErr(stderr, "record", "%s %s: there is no directory %s", out.flag, out.path, dir)
			}
		}
	}
	if o.schedule != "" {
		f, err := os.Open(o.schedule)
		if err != nil {
			return usageErr(stderr, "record", "--schedule %s: %v", o.schedule, pathErr(err))
		}
		sched, err := record.ReadSchedule(f)
		f.Close()
		if err != nil {
			return usageErr(stderr, "record", "--schedule %s: %v", o.schedule, err)
		}
		o.opt.Schedule = sched
		o.opt.Workload.Rate = 0
	}
	bundle, err := openOut("--bundle", o.bundle)
	if err != nil {
		return usageErr(stderr, "record", "%v", err)
	}
	defer bundle.discard()
	events, err := openOut("--events", o.events)
	if err != nil {
		return usageErr(stderr, "record", "%v", err)
	}
	defer events.discard()
	notes, err := openOut("--notifications", o.notifications)
	if err != nil {
		return usageErr(stderr, "record", "%v", err)
	}
	defer notes.discard()

	ctx, stop := interrupted()
	defer stop()
	o.opt.Waiting = func(w record.Waiter) {
		who := fmt.Sprintf("pid %d", w.PID)
		if w.PID == 0 {
			who = "a prepared transaction"
		}
		fmt.Fprintf(stderr, "%s record: waiting for transaction %s (%s, open for %s) to end before reading a chunk (--wait %s)\n", progName, w.Xid, who, w.Age.Round(time.Second), o.opt.Wait)
	}
	var st record.Stats
	var recErr error // the recording's own error, which write would wrap
	// Each file is written whole or not at all: the run happens inside
	// the writes of all three. A run that fails its oracle check has
	// written them: they say what it saw.
	run := func() error {
		st, recErr = record.Record(ctx, o.opt)
		var re *record.Error
		if errors.As(recErr, &re) && re.Oracle {
			return nil
		}
		return recErr
	}
	for _, f := range []struct {
		out *outFile
		w   *io.Writer
	}{{bundle, &o.opt.Bundle}, {events, &o.opt.Events}, {notes, &o.opt.Notifications}} {
		if f.out == nil {
			continue
		}
		inner, out, w := run, f.out, f.w
		run = func() error {
			return out.write(func(x io.Writer) error { *w = x; return inner() })
		}
	}
	err = run()
	if recErr != nil {
		err = recErr
	}
	if err != nil {
		var re *record.Error
		switch {
		case ctx.Err() != nil || errors.Is(err, context.Canceled):
			fmt.Fprintln(stderr, progName+" record: interrupted; the slot, the publication and the signal rows were removed, no file was written")
			return exitIncomplete
		case errors.As(err, &re) && re.Stuck:
			fmt.Fprintf(stderr, "%s record: %s; the slot, the publication and the signal rows were removed\n", progName, re.Msg)
			return exitIncomplete
		case errors.As(err, &re) && re.Usage:
			fmt.Fprintf(stderr, "%s record: %s\n", progName, re.Msg)
			return exitUsage
		case errors.As(err, &re) && re.Oracle:
			fmt.Fprintf(stderr, "%s record: %s; the files were written as recorded, and do not describe the table\n", progName, re.Msg)
			return exitViolated
		}
		fmt.Fprintf(stderr, "%s record: %s\n", progName, strings.Join(strings.Fields(err.Error()), " "))
		return exitError
	}
	secs := st.Elapsed.Seconds()
	fmt.Fprintf(stdout, "recorded %d chunks: %d rows read, %d log positions, %d entries emitted (%d survivors; %d buffered rows raced by a window event), %d workload transactions; frontier %d, max key %s\n",
		st.Chunks, st.Rows, st.Positions, st.Emitted, st.Survivors, st.Discarded, st.Txns, st.Frontier, st.MaxKey)
	if o.opt.Schedule == nil {
		fmt.Fprintf(stdout, "%s: %.0f rows/s read, %.0f workload transactions/s, %.0f positions/s consumed; a high watermark reached the consumer within %s\n",
			st.Elapsed.Round(time.Millisecond), float64(st.Rows)/max(secs, 1e-9), float64(st.Txns)/max(secs, 1e-9),
			float64(st.Positions)/max(secs, 1e-9), st.MaxLag.Round(time.Millisecond))
	}
	if o.opt.Schedule != nil {
		fmt.Fprintf(stdout, "replayed %d steps of the trace (%s: %s); the sink at rest against the table:\n", len(o.opt.Schedule.Steps)-1, o.opt.Schedule.Property, o.opt.Schedule.Reason)
		if len(st.Diff) == 0 {
			fmt.Fprintln(stdout, "  they agree on every key")
		}
		for _, d := range st.Diff {
			fmt.Fprintln(stdout, "  "+d)
		}
	} else {
		fmt.Fprintf(stdout, "the oracle check passed: the table, read once the run stopped, agrees with the emitted stream on all %d keys either holds\n", st.Checked)
	}
	if o.opt.Schedule == nil && o.opt.Fault != "" {
		fmt.Fprintf(stdout, "fault %s changed the capture's behaviour %d times\n", o.opt.Fault, st.Diverged)
	}
	return exitOK
}

// cleanDB is `cutcheck clean --db URL`: the slots, publications, signal
// rows and signalling tables killed record runs left.
func cleanDB(url, signalTable string, stdout, stderr io.Writer) int {
	ctx, stop := interrupted()
	defer stop()
	dropped, err := record.Clean(ctx, url, signalTable)
	for _, d := range dropped {
		fmt.Fprintf(stdout, "%s, left by a cutcheck record run\n", d)
	}
	if err != nil {
		var re *record.Error
		fmt.Fprintf(stderr, "%s clean: %v\n", progName, err)
		if errors.As(err, &re) && re.Usage {
			return exitUsage
		}
		return exitError
	}
	if len(dropped) == 0 {
		fmt.Fprintln(stdout, "nothing to drop: no slot, publication, signal row or signalling table of cutcheck record is left on the server")
	}
	return exitOK
}
