package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cutcheck/cutcheck/explore"
)

// A check stopped at a depth limit with --resume, then run again without
// the limit, ends with the report of a run never stopped (all but time),
// for a passing and a failing spec.
func TestCheckResume(t *testing.T) {
	for _, extra := range [][]string{nil, {"--mutation", "early-release"}} {
		base := append([]string{"check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0"}, extra...)
		dir := t.TempDir()
		report := func(name string, args ...string) (int, explore.Report) {
			file := filepath.Join(dir, name)
			code, out, stderr := runCLI(append(append(slices.Clone(base), args...), "--json", file)...)
			var rep explore.Report
			data, err := os.ReadFile(file)
			if err != nil || json.Unmarshal(data, &rep) != nil {
				t.Fatalf("%v: exit %d %v\n%s%s", args, code, err, out, stderr)
			}
			rep.Stats.Elapsed, rep.Stats.OnDisk = 0, false
			rep.Stats.MemPeak, rep.Stats.BytesPerState = 0, 0
			return code, rep
		}
		wantCode, want := report("plain.json")
		ckdir := filepath.Join(dir, "tier")
		if code, _ := report("stopped.json", "--dir", ckdir, "--resume", "--max-depth", "3"); code != exitIncomplete {
			t.Fatalf("stopped run: exit %d", code)
		}
		if _, err := os.Stat(filepath.Join(ckdir, "checkpoint", "meta.json")); err != nil {
			t.Fatalf("no checkpoint: %v", err)
		}
		code, got := report("resumed.json", "--dir", ckdir, "--resume")
		if code != wantCode || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: resumed exit %d %+v\nuninterrupted exit %d %+v", extra, code, got, wantCode, want)
		}
	}
	code, _, stderr := runCLI("check", "classic", "--resume")
	if code != exitUsage || !strings.Contains(stderr, "--resume needs --dir") {
		t.Errorf("--resume without --dir: %d %q", code, stderr)
	}
}

// A checkpoint is continued only by the search that made it: resumed
// under another mutation, other bounds or other deadlock checking it is
// refused with one line naming the field that differs (exit 2), where the
// old code passed; a damaged checkpoint is refused with one line (exit
// 3). Resuming says from which level.
func TestResumeRefusesAnotherSearch(t *testing.T) {
	base := []string{"check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0"}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "checkpoint")
	stop := func() {
		t.Helper()
		os.RemoveAll(ckpt)
		if code, out, stderr := runCLI(append(slices.Clone(base), "--dir", dir, "--resume", "--max-depth", "3")...); code != exitIncomplete {
			t.Fatalf("stopped run: exit %d %s%s", code, out, stderr)
		}
	}
	stop()
	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"--mutation", "early-release"}, `mutation is "none" there, "early-release" here`},
		{[]string{"--events", "3"}, `events is "2" there, "3" here`},
		{[]string{"--no-deadlock"}, `deadlock is "true" there, "false" here`},
		{[]string{"--only", "final-replay"}, `only is "" there, "final-replay" here`},
	} {
		code, _, stderr := runCLI(append(append(slices.Clone(base), tt.args...), "--dir", dir, "--resume")...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.field) {
			t.Errorf("%v: exit %d %q, want exit 2 naming %s", tt.args, code, stderr, tt.field)
		}
	}

	// Damaged files: one line, exit 3, and nothing trusted.
	for _, damage := range []struct {
		file string
		do   func([]byte) []byte
	}{
		{"levels", func(b []byte) []byte { return b[:len(b)/2] }},
		{"levels", func(b []byte) []byte { return nil }},
		{"frontier-3", func(b []byte) []byte { b[len(b)/3] ^= 0x10; return b }},
		{"meta.json", func(b []byte) []byte { return b[:10] }},
	} {
		stop()
		path := filepath.Join(ckpt, damage.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, damage.do(data), 0o644)
		code, _, stderr := runCLI(append(slices.Clone(base), "--dir", dir, "--resume")...)
		if code != exitError || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "damaged") {
			t.Errorf("%s damaged: exit %d %q, want exit 3", damage.file, code, stderr)
		}
	}

	stop()
	code, out, stderr := runCLI(append(slices.Clone(base), "--dir", dir, "--resume")...)
	if code != exitOK || !strings.Contains(out, "resuming from the checkpoint in "+ckpt+": level 3,") {
		t.Errorf("resumed: exit %d\n%s%s", code, out, stderr)
	}
}

// A shard of run resumes from its checkpoint: stopped, it writes no
// result; started again, it continues and writes the result an
// uninterrupted shard writes. run --resume without --shard is refused.
func TestShardResume(t *testing.T) {
	spec := filepath.Join("..", "specs", "classic-2.json")
	shards, work := t.TempDir(), t.TempDir()
	args := []string{"run", spec, "--shard", "1/2", "--shard-dir", shards, "--dir", work, "--resume", "--progress", "0"}
	code, out, stderr := runCLI(append(slices.Clone(args), "--max-depth", "3")...)
	if names, _ := filepath.Glob(filepath.Join(shards, "*", "*.json")); code != exitIncomplete || len(names) != 0 {
		t.Fatalf("stopped shard: exit %d, results %v\n%s%s", code, names, out, stderr)
	}
	code, out, stderr = runCLI(args...)
	if code != exitOK || !strings.Contains(out, "resuming from the checkpoint in ") || !strings.Contains(out, "level 3,") {
		t.Fatalf("resumed shard: exit %d\n%s%s", code, out, stderr)
	}
	resumed, _, err := readShards(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	if code, out, stderr := runCLI("run", spec, "--shard", "1/2", "--shard-dir", fresh, "--progress", "0"); code != exitOK {
		t.Fatalf("uninterrupted shard: exit %d\n%s%s", code, out, stderr)
	}
	want, _, err := readShards(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, w := resumed.Report.Stats, want.Report.Stats
	if g.Distinct != w.Distinct || g.Generated != w.Generated || !reflect.DeepEqual(resumed.Report.Levels, want.Report.Levels) {
		t.Errorf("resumed shard %+v\nuninterrupted %+v", g, w)
	}
	code, _, stderr = runCLI("run", spec, "--dir", work, "--resume")
	if code != exitUsage || !strings.Contains(stderr, "--resume applies to one shard") {
		t.Errorf("run --resume without --shard: exit %d %q", code, stderr)
	}
}
