package record

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Workload is the seeded concurrent workload run against the table while
// it is recorded: inserts, updates (also to the same value), deletes and
// multi-row transactions over the keys 1..max+max/8+1, so some land above
// the snapshot's maximum key.
type Workload struct {
	Rate    int   // transactions per second over all clients; 0 runs none, <0 as fast as possible
	Clients int   // connections (default 2)
	MaxRows int   // rows per transaction, 1..MaxRows (default 3)
	Seed    int64 // the same seed gives the same sequence of transactions per client
}

type workload struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	txns   atomic.Int64
}

func startWorkload(ctx context.Context, s *session, maxKey int64) (*workload, error) {
	opt := s.opt.Workload
	if opt.Clients <= 0 {
		opt.Clients = 2
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = 3
	}
	span := maxKey + maxKey/8 + 1
	if span < 8 {
		span = 8
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &workload{cancel: cancel}
	conns := make([]*pgx.Conn, opt.Clients)
	for i := range conns {
		c, err := connect(ctx, s.cfg)
		if err != nil {
			cancel()
			for _, c := range conns[:i] {
				c.Close(context.Background())
			}
			return nil, err
		}
		conns[i] = c
	}
	t := s.tab
	var cols []int // the columns the workload writes: every one but the key
	for i := range t.cols {
		if i != t.pk {
			cols = append(cols, i)
		}
	}
	var names []string
	for _, i := range append([]int{t.pk}, cols...) {
		names = append(names, quoteIdent(t.cols[i].name))
	}
	var ph []string
	for i := range names {
		ph = append(ph, "$"+strconv.Itoa(i+1))
	}
	insert := "INSERT INTO " + t.qname + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ") ON CONFLICT DO NOTHING"
	del := "DELETE FROM " + t.qname + " WHERE " + names[0] + " = $1"
	for i, c := range conns {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close(context.Background())
			rng := rand.New(rand.NewPCG(uint64(opt.Seed), uint64(i)))
			var tick *time.Ticker
			if opt.Rate > 0 {
				tick = time.NewTicker(time.Duration(int64(time.Second) * int64(opt.Clients) / int64(opt.Rate)))
				defer tick.Stop()
			}
			for ctx.Err() == nil {
				if tick != nil {
					select {
					case <-tick.C:
					case <-ctx.Done():
						return
					}
				}
				n := 1 + rng.IntN(opt.MaxRows)
				keys := make([]int64, n)
				for j := range keys {
					keys[j] = 1 + rng.Int64N(span)
				}
				// Rows in key order: two transactions never wait on each other in a cycle.
				sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
				b := &pgx.Batch{}
				for _, k := range keys {
					switch r := rng.IntN(10); {
					case r < 3:
						args := []any{k}
						for _, ci := range cols {
							args = append(args, randomValue(rng, t.cols[ci].typ))
						}
						b.Queue(insert, args...)
					case r < 8:
						ci := cols[rng.IntN(len(cols))]
						b.Queue("UPDATE "+t.qname+" SET "+quoteIdent(t.cols[ci].name)+" = $2 WHERE "+names[0]+" = $1", k, randomValue(rng, t.cols[ci].typ))
					default:
						b.Queue(del, k)
					}
				}
				if len(cols) == 0 {
					b = &pgx.Batch{}
					for _, k := range keys {
						b.Queue(insert, k)
					}
				}
				err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
				if err == nil {
					w.txns.Add(1)
				} else if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					// A serialization failure or a lost race: the next transaction goes on.
					continue
				}
			}
		}()
	}
	return w, nil
}

// randomValue draws from a small domain, so updates to the same value happen.
func randomValue(rng *rand.Rand, typ string) any {
	switch typ {
	case "bool":
		return rng.IntN(2) == 0
	case "int2", "int4", "int8":
		return rng.IntN(4)
	}
	return "w" + strconv.Itoa(rng.IntN(4))
}

// stop ends the workload and returns the transactions it committed.
func (w *workload) stop() int64 {
	w.cancel()
	w.wg.Wait()
	return w.txns.Load()
}
