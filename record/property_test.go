package record

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cutcheck/cutcheck/certify"
)

// testSeed is CUTCHECK_SEED when set (to replay a failure), else the clock.
func testSeed(t *testing.T) int64 {
	t.Helper()
	if s := os.Getenv("CUTCHECK_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CUTCHECK_SEED=%q: %v", s, err)
		}
		return n
	}
	return time.Now().UnixNano() % 1e9
}

// randomSchema draws a table: a key of one of the key kinds and two to six
// columns of any type, some NOT NULL. It returns the DDL's column list,
// the key columns and whether Debezium's rendering of the key orders as
// the key does.
func randomSchema(rng *rand.Rand, coll, enum, domain, comp string) (cols string, key []string, dbzOrders bool) {
	var defs []string
	switch rng.IntN(8) {
	case 0:
		defs, key, dbzOrders = []string{"id bigint"}, []string{"id"}, true
	case 1:
		defs, key, dbzOrders = []string{"id int"}, []string{"id"}, true
	case 2:
		defs, key, dbzOrders = []string{`id text COLLATE "` + coll + `"`}, []string{"id"}, true
	case 3:
		defs, key, dbzOrders = []string{"id uuid"}, []string{"id"}, true
	case 4:
		defs, key, dbzOrders = []string{"ka int", `kb varchar(12) COLLATE "` + coll + `"`}, []string{"kb", "ka"}, true
	case 5:
		defs, key, dbzOrders = []string{"kd date", "ks text"}, []string{"kd", "ks"}, true
	case 6:
		defs, key, dbzOrders = []string{"id timestamp"}, []string{"id"}, true
	default:
		defs, key = []string{"id numeric"}, []string{"id"}
	}
	all := allTypes(enum, domain, comp)
	for n := 2 + rng.IntN(5); n > 0; n-- {
		d := all[rng.IntN(len(all))]
		d = "c" + strconv.Itoa(len(defs)) + "_" + d // unique names
		if rng.IntN(4) == 0 {
			d += " NOT NULL"
		}
		defs = append(defs, d)
	}
	return strings.Join(defs, ", ") + ", PRIMARY KEY (" + strings.Join(key, ", ") + ")", key, dbzOrders
}

// Random schemas × random workloads × chunk sizes (issue item 8, the
// types): every clean run is accepted, and certify --from debezium reaches
// the same cut where Debezium's key rendering orders as the key does; the
// same table recorded with a shipped fault is rejected whenever the fault
// acted. Each run logs its seed; CUTCHECK_SEED=n replays run n.
// Reference: 003 §8–§9, main paper Thm 1; the mutations of Faults.
func TestPropertyRandomSchemas(t *testing.T) {
	url := pgURL(t)
	c := sqlConn(t, url)
	enum, domain, comp := userTypes(t, c)
	coll := "C"
	var name string
	if c.QueryRow(context.Background(), "SELECT collname FROM pg_collation WHERE collname = 'en-x-icu'").Scan(&name) == nil {
		coll = name
	}
	runs := 40
	if n, err := strconv.Atoi(os.Getenv("CUTCHECK_PROPERTY_RUNS")); err == nil {
		runs = n
	}
	base := testSeed(t)
	faults := []string{"no-discard", "copy-dropped", "late-start", "low-edge-off-by-one", "high-edge-off-by-one", "early-release"}
	acted := 0
	for r := 0; r < runs; r++ {
		seed := base + int64(r)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 30))
			cols, key, dbzOrders := randomSchema(rng, coll, enum, domain, comp)
			tab, sig := freshTable(t, c)
			if _, err := c.Exec(context.Background(), "CREATE TABLE "+tab+" ("+cols+")"); err != nil {
				t.Fatalf("CUTCHECK_SEED=%d: %v", seed, err)
			}
			ti, err := inspect(context.Background(), c, tab, nil)
			if err != nil {
				t.Fatalf("CUTCHECK_SEED=%d: %v", seed, err)
			}
			rows := fill(t, c, ti, rng.IntN(61), rng)
			opt := Options{URL: url, Table: tab, SignalTable: sig, ChunkSize: 1 + rng.IntN(16),
				Workload: Workload{Rate: []int{-1, 800}[rng.IntN(2)], Seed: seed, Clients: 2, MaxRows: 3}, WindowHold: 5 * time.Millisecond}
			if opt.ChunkSize < 4 || !ti.intKey {
				// inserts inside the key range outpacing chunks of a row or
				// two keep the backfill going; so do an unthrottled
				// workload's new keys of any other kind than an integer,
				// which land anywhere below the snapshot's maximum key (as
				// they would under Debezium)
				opt.Workload.Rate = 200
			}
			t.Logf("CUTCHECK_SEED=%d: %s with %d rows, chunks of %d", seed, cols, rows, opt.ChunkSize)
			if dbzOrders {
				recordBoth(t, opt, key)
			} else if st, bundle, _ := record(t, opt); verify(t, bundle).Verdict != certify.Accept {
				t.Fatalf("the bundle: %s (stats %+v)", outcome(verify(t, bundle)), st)
			}
			opt.Fault = faults[rng.IntN(len(faults))]
			st, bundle, err := recordErr(t, opt)
			if err != nil && (oracleErr(err) == "" || st.Diverged == 0) {
				// the table oracle may see what the fault did; nothing else may fail
				t.Fatalf("--fault %s (acted %d times): %v", opt.Fault, st.Diverged, err)
			}
			res := verify(t, bundle)
			switch {
			case st.Diverged > 0 && res.Verdict != certify.Reject:
				t.Fatalf("--fault %s acted %d times, yet %s", opt.Fault, st.Diverged, outcome(res))
			case st.Diverged == 0 && res.Verdict != certify.Accept:
				t.Fatalf("--fault %s never acted, yet %s", opt.Fault, outcome(res))
			case st.Diverged > 0:
				acted++
			}
			noLeftovers(t, c, sig)
		})
	}
	t.Logf("%d runs; a fault acted in %d", runs, acted)
	if runs >= 5 && acted == 0 {
		t.Errorf("in %d runs no fault acted", runs)
	}
}
