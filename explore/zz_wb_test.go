package explore

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
	"fmt"
	"github.com/dgraph-io/badger/v4"
)

func TestZZWB(t *testing.T) {
	type cfg struct{ name string; f func(badger.Options) badger.Options }
	cfgs := []cfg{
		{"base", func(o badger.Options) badger.Options { return o }},
		{"l0-32", func(o badger.Options) badger.Options { return o.WithNumLevelZeroTables(32).WithNumLevelZeroTablesStall(64) }},
		{"l0-32-big", func(o badger.Options) badger.Options { return o.WithNumLevelZeroTables(32).WithNumLevelZeroTablesStall(64).WithBaseLevelSize(256<<20).WithBaseTableSize(16<<20) }},
		{"mt32-l0-16", func(o badger.Options) badger.Options { return o.WithMemTableSize(32<<20).WithNumLevelZeroTables(16).WithNumLevelZeroTablesStall(32).WithBaseLevelSize(256<<20).WithBaseTableSize(16<<20) }},
	}
	for _, c := range cfgs {
		db, err := badger.Open(c.f(badgerOptions(t.TempDir(), 0)))
		if err != nil { t.Fatal(err) }
		d := &diskSeen{db: db, cache: new(seenSet)}
		r := rand.New(rand.NewPCG(1, 2))
		var tw time.Duration
		c0 := cpuTime()
		const B = 2000000
		const L = 6
		for inc := 0; inc < L; inc++ {
			for i := 0; i < B; i++ { d.cache.insert(r.Uint64() | 1) }
			t0 := time.Now()
			if err := d.flush(context.Background()); err != nil { t.Fatal(err) }
			tw += time.Since(t0)
		}
		t0 := time.Now()
		d.close()
		fmt.Printf("%s: write %v/key close %v cpu %v\n", c.name, tw/(L*B), time.Since(t0), cpuTime()-c0)
	}
}
