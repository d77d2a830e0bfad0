package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cutcheck/cutcheck/certify"
)

// recordAll records a run with its bundle, its Debezium events and its
// incremental-snapshot notifications.
func recordAll(t *testing.T, opt Options) (st Stats, bundle, events, notes []byte) {
	t.Helper()
	var b, e, n bytes.Buffer
	opt.Bundle, opt.Events, opt.Notifications = &b, &e, &n
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := Record(ctx, opt)
	// A fault that acted may leave the sink unlike the table: the oracle
	// check fails, and the files are written all the same.
	if err != nil && (oracleErr(err) == "" || opt.Fault == "" || st.Diverged == 0) {
		t.Fatalf("record: %v", err)
	}
	return st, b.Bytes(), e.Bytes(), n.Bytes()
}

// fromDebezium is certify --from debezium --notifications on a run's files.
func fromDebezium(t *testing.T, tab, sig string, events, notes []byte) (*certify.Result, []string) {
	t.Helper()
	var b bytes.Buffer
	conv, f, err := certify.FromDebeziumFiles([]certify.DebeziumInput{{Name: "events", R: bytes.NewReader(events)}}, &b,
		certify.DebeziumOptions{Table: tab, SignalTable: sig, Notifications: bytes.NewReader(notes)})
	ns := conv.Notes
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	if f != nil {
		v := certify.Reject
		if f.Obligation == "Unsupported" {
			v = certify.Unsupported
		}
		return &certify.Result{Verdict: v, Failure: f}, ns
	}
	res := verify(t, b.Bytes())
	if res.Verdict == certify.Accept { // as certify --from debezium prints it
		res.Assumes = append(res.Assumes, conv.Assumes...)
	}
	return res, ns
}

func outcome(r *certify.Result) string {
	switch {
	case r.Verdict == certify.Accept && r.Cut != nil:
		return fmt.Sprintf("Accept at %d on %s: %d present, digest %s", r.Cut.Frontier, r.Cut.Scope, r.Cut.Present, r.Cut.Digest)
	case r.Failure != nil:
		return fmt.Sprintf("%v: %s %s %s", r.Verdict, r.Failure.Obligation, r.Failure.Clause, r.Failure.Field)
	}
	return r.Verdict.String()
}

// The Debezium events and notifications a clean run wrote reach the
// bundle's verdict through certify --from debezium: the same virtual cut
// (frontier, scope, state digest), with nothing left out of the scope.
// Reference: README "Debezium recordings"; 003 §8–§9.
func TestDebeziumRoundTripClean(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, tc := range []struct {
		seed        int64
		chunk, rows int
		rate        int
	}{{1, 7, 60, 1000}, {2, 16, 60, 1000}, {3, 50, 60, 1000}, {4, 60, 60, 1000}, {5, 2, 20, -1}, {6, 3, 0, 0}} {
		t.Run(fmt.Sprintf("seed%d-chunk%d-rows%d", tc.seed, tc.chunk, tc.rows), func(t *testing.T) {
			tab, sig := freshTable(t, c)
			if tc.rows == 0 { // an empty table: one window, the maximum-key query finds no row
				c.Exec(context.Background(), "CREATE TABLE "+tab+" (id bigint PRIMARY KEY, v integer, s text)")
			}
			st, bundle, events, notes := recordAll(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: tc.chunk, Populate: tc.rows,
				Workload: Workload{Rate: tc.rate, Seed: tc.seed, Clients: 2, MaxRows: 2}, WindowHold: 5 * time.Millisecond})
			debeziumOrder(t, tab, sig, events)
			want := verify(t, bundle)
			got, ns := fromDebezium(t, tab, sig, events, notes)
			if want.Verdict != certify.Accept || !strings.Contains(outcome(want), "[−∞, +∞)") {
				t.Fatalf("the bundle: %s", outcome(want))
			}
			if hollowWindow(t, tab, sig, events) {
				// A window whose chunk read rows, all discarded, delivers
				// none, like a retried chunk's window, which sends no
				// notification: the converter cannot tell which windows the
				// chunk ends belong to, says so and claims less, never the
				// same scope.
				t.Logf("a window delivered no row: %s %q", outcome(got), ns)
				if !strings.Contains(strings.Join(ns, "; "), "are not placed") && got.Verdict != certify.Unsupported ||
					got.Verdict == certify.Reject || got.Verdict == certify.Accept && got.Cut.Scope == want.Cut.Scope {
					t.Fatalf("a window delivered no row; want fewer keys certified, got %s %q", outcome(got), ns)
				}
				if got.Verdict == certify.Accept {
					for k, v := range got.Cut.State { // on the keys it certifies, the same cut
						if want.Cut.State[k] != v {
							t.Fatalf("key %s: %s from the events, %s from the bundle", k, v, want.Cut.State[k])
						}
					}
				}
				return
			}
			if outcome(got) != outcome(want) || len(ns) > 0 {
				t.Fatalf("stats %+v\nthe bundle: %s\nthe events: %s %q", st, outcome(want), outcome(got), ns)
			}
			// The events carry neither the discarded reads nor transaction
			// metadata: the Accept rests on exactly those two more
			// assumptions (their txId labels show the transactions, not
			// that the last one is whole).
			more := map[string]bool{}
			for _, a := range got.Assumes {
				more[a] = true
			}
			for _, a := range want.Assumes {
				if !more[a] {
					t.Errorf("the bundle's Accept assumes %q, the events' does not", a)
				}
				delete(more, a)
			}
			if len(more) != 2 {
				t.Errorf("the events' Accept assumes more: %v", more)
			}
			for a := range more {
				if !strings.HasPrefix(a, "survivor-only reads") && !strings.HasPrefix(a, "a row-event cut") {
					t.Errorf("the events' Accept assumes %q", a)
				}
			}
		})
	}
}

// debeziumOrder checks that the events are in Debezium's order: each
// window's snapshot rows right before its close row, at the close's source
// position (EventDispatcher.dispatchDataChangeEvent runs closeWindow before
// it queues the close row's event).
func debeziumOrder(t *testing.T, tab, sig string, events []byte) {
	t.Helper()
	var rows []string // the sequences of the rows not yet followed by their close
	for i, line := range bytes.Split(bytes.TrimSpace(events), []byte("\n")) {
		var e struct {
			Op     string `json:"op"`
			After  struct{ Type string }
			Source struct{ Table, Sequence string }
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Source.Table == tab && e.Op == "r":
			rows = append(rows, e.Source.Sequence)
		case e.Source.Table == sig && e.After.Type == "snapshot-window-close":
			for _, s := range rows {
				if s != e.Source.Sequence {
					t.Fatalf("event %d: a window's row at %s, its close at %s", i+1, s, e.Source.Sequence)
				}
			}
			rows = nil
		case len(rows) > 0:
			t.Fatalf("event %d: snapshot rows not followed by their close row", i+1)
		}
	}
	if len(rows) > 0 {
		t.Fatalf("snapshot rows after the last close row")
	}
}

// hollowWindow says whether a window other than the last delivered no
// snapshot row (its chunk read rows, since only the last read returns none).
func hollowWindow(t *testing.T, tab, sig string, events []byte) bool {
	t.Helper()
	var delivered []int
	rows := 0 // a window's rows come before its close row
	for _, line := range bytes.Split(bytes.TrimSpace(events), []byte("\n")) {
		var e struct {
			Op     string `json:"op"`
			After  struct{ Type string }
			Source struct{ Table string }
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Source.Table == sig && e.Op == "c" && e.After.Type == "snapshot-window-close":
			delivered, rows = append(delivered, rows), 0
		case e.Source.Table == tab && e.Op == "r":
			rows++
		}
	}
	for i := 0; i+1 < len(delivered); i++ {
		if delivered[i] == 0 {
			return true
		}
	}
	return false
}

// A faulted run's Debezium events reach the bundle's verdict where the
// events can show the fault, and are never accepted where they cannot.
// no-discard: both Reject on the same clause. late-start: the events begin
// after the first window opened, so its close has no open (or, when the
// close was the first position not consumed, its rows have no close):
// Unsupported (the bundle, which records where consumption started,
// Rejects on the consumption start). copy-dropped: no window delivers a row, so no
// window can be told to be the one that read nothing (a retried chunk and
// the last read look alike): Unsupported, where the bundle Rejects.
// The window edges: both Reject on the same clause. early-release: a
// snapshot row before its window's close is no Debezium delivery:
// Unsupported.
// Reference: mutations no-discard, copy-dropped, late-start, the window
// edges and early-release (Def. 6.2, S-OBS, §2.3).
func TestDebeziumRoundTripFaults(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	for _, tc := range []struct {
		fault, clause, field string // field: the converter's Unsupported field (a|b: either), "" for the bundle's verdict
	}{
		{"no-discard", "the prefix is the window-discard emission", ""},
		{"late-start", "consumption starts at or before every low edge", "snapshot-window-close|op"},
		{"copy-dropped", "the prefix is the window-discard emission", "snapshot-window-open"},
		{"low-edge-off-by-one", "the prefix is the window-discard emission", ""},
		{"high-edge-off-by-one", "the prefix is the window-discard emission", ""},
		{"early-release", "the prefix is the window-discard emission", "op"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			bit := false
			for seed := int64(1); seed <= faultTries && !bit; seed++ {
				tab, sig := freshTable(t, c)
				st, bundle, events, notes := recordAll(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 5, Populate: 30, Fault: tc.fault,
					Workload: Workload{Rate: -1, Seed: seed, Clients: 2, MaxRows: 2}, WindowHold: 15 * time.Millisecond})
				if st.Diverged == 0 {
					continue
				}
				bit = true
				want := verify(t, bundle)
				got, ns := fromDebezium(t, tab, sig, events, notes)
				if want.Verdict != certify.Reject || !strings.HasPrefix(want.Failure.Clause, tc.clause) {
					t.Fatalf("seed %d: the bundle: %s", seed, outcome(want))
				}
				switch {
				case tc.field == "" && hollowWindow(t, tab, sig, events):
					// as in the clean runs, the converter certifies less
					if got.Verdict == certify.Accept && got.Cut.Scope == want.Cut.Scope {
						t.Fatalf("seed %d: a window delivered no row, yet the events are accepted on the whole scope: %q", seed, ns)
					}
				case tc.field == "" && outcome(got) != outcome(want):
					t.Fatalf("seed %d: the bundle: %s\nthe events: %s %q", seed, outcome(want), outcome(got), ns)
				case tc.field != "" && (got.Verdict != certify.Unsupported || !slices.Contains(strings.Split(tc.field, "|"), got.Failure.Field)):
					t.Fatalf("seed %d: want Unsupported (%s) from the events, got %s %q: %+v", seed, tc.field, outcome(got), ns, got.Failure)
				}
			}
			if !bit {
				t.Errorf("in %d seeded runs the fault never acted", faultTries)
			}
		})
	}
}

// Rows another run writes to a shared signalling table while this one
// records are positions of the bundle but no change events of this run
// (as if each had its own signalling table): the same cut from both, the
// events' frontier lower by the foreign positions.
func TestDebeziumRoundTripSharedSignalTable(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	tab, sig := freshTable(t, c)
	other := sqlConn(t, url)
	// the signalling table exists before the run, for the other writer
	c.Exec(context.Background(), "CREATE TABLE "+sig+" (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		n := 0
		for ctx.Err() == nil {
			n++
			other.Exec(ctx, "INSERT INTO "+sig+" (id, type, data) VALUES ($1, 'snapshot-window-open', NULL)", fmt.Sprintf("other-%d-open", n))
			time.Sleep(2 * time.Millisecond)
		}
		done <- n
	}()
	_, bundle, events, notes := recordAll(t, Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 10, Populate: 60,
		Workload: Workload{Rate: 500, Seed: 8}, WindowHold: 5 * time.Millisecond})
	cancel()
	<-done
	c.Exec(context.Background(), "DELETE FROM "+sig+" WHERE id LIKE 'other-%'")
	if bytes.Contains(events, []byte("other-")) {
		t.Fatalf("another run's signal row is among this run's events")
	}
	want := verify(t, bundle)
	got, ns := fromDebezium(t, tab, sig, events, notes)
	if want.Verdict != certify.Accept || got.Verdict != certify.Accept || len(ns) > 0 {
		t.Fatalf("the bundle: %s\nthe events: %s %q", outcome(want), outcome(got), ns)
	}
	if got.Cut.Scope != want.Cut.Scope || got.Cut.Digest != want.Cut.Digest || got.Cut.Frontier >= want.Cut.Frontier {
		t.Fatalf("want the same cut at a lower frontier:\nthe bundle: %s\nthe events: %s", outcome(want), outcome(got))
	}
}
