package certify

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHelperVerifyFile is not a test: run by TestMemHeld in a child
// process, it verifies the bundle $CUTCHECK_VERIFY_FILE under the budget
// $CUTCHECK_VERIFY_MEM and prints the verdict line, the parts and the peak
// resident memory (VmHWM), so that the peak is the verification's alone.
func TestHelperVerifyFile(t *testing.T) {
	name := os.Getenv("CUTCHECK_VERIFY_FILE")
	if name == "" {
		t.Skip("helper for TestMemHeld")
	}
	mem, _ := strconv.ParseInt(os.Getenv("CUTCHECK_VERIFY_MEM"), 10, 64)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(f, Options{Mem: mem, Dir: filepath.Dir(name)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d %d %d %s\n", procStatus("VmHWM"), res.Stats.Parts, res.Stats.Spills, res.Line())
	os.Exit(0)
}

// verifyChild verifies the bundle file under mem in a child process and
// returns its peak resident memory, parts, spills and verdict line.
func verifyChild(t *testing.T, name string, mem int64) (peak int64, parts, spills int, line string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperVerifyFile$")
	cmd.Env = append(os.Environ(), "CUTCHECK_VERIFY_FILE="+name, fmt.Sprintf("CUTCHECK_VERIFY_MEM=%d", mem))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := fmt.Sscanf(string(out), "%d %d %d", &peak, &parts, &spills); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	f := strings.SplitN(strings.TrimSpace(string(out)), " ", 4)
	return peak, parts, spills, f[3]
}

// --mem is held: a generated bundle whose states need about four times the
// budget is verified from its file in parts, its peak resident memory
// (VmHWM, the whole process) within the budget and a tenth, at 64 and
// 128 MiB; CUTCHECK_MEM_TEST_LARGE=1 adds 512 MiB (7 M events, a minute more).
func TestMemHeld(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("resident memory under the race detector is not the verifier's")
	}
	budgets := []int64{64 << 20, 128 << 20}
	if os.Getenv("CUTCHECK_MEM_TEST_LARGE") == "1" {
		budgets = append(budgets, 512<<20)
	}
	for _, mem := range budgets {
		// states of about 300 bytes: keys for twice the budget's half
		keys := int(mem / 300 * 2)
		s := synth{keys: keys, chunkKeys: 10_000, window: 10_000, events: keys * 2}
		name := filepath.Join(t.TempDir(), "bundle.jsonl")
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		peak, parts, spills, line := verifyChild(t, name, mem)
		t.Logf("--mem %d MiB: %d keys, peak %d MiB in %d parts, %d spills: %.60s", mem>>20, keys, peak>>20, parts, spills, line)
		if !strings.HasPrefix(line, "Accept") || parts < 2 {
			t.Errorf("--mem %d MiB: %d parts: %s", mem>>20, parts, line)
		}
		if peak > mem+mem/10 {
			t.Errorf("--mem %d MiB: peak resident memory %d MiB", mem>>20, peak>>20)
		}
	}
}

// TestHelperConvertFile is not a test: run by TestConvertMemHeld in a
// child process, it converts the recording $CUTCHECK_CONVERT_FILE
// (dbzSynth's, its chunk bounds in $CUTCHECK_CONVERT_BOUNDS) under the
// budget $CUTCHECK_VERIFY_MEM and prints the peak resident memory, the
// events in the bundle and its verdict.
func TestHelperConvertFile(t *testing.T) {
	name := os.Getenv("CUTCHECK_CONVERT_FILE")
	if name == "" {
		t.Skip("helper for TestConvertMemHeld")
	}
	mem, _ := strconv.ParseInt(os.Getenv("CUTCHECK_VERIFY_MEM"), 10, 64)
	var bounds []json.RawMessage
	if err := json.Unmarshal([]byte(os.Getenv("CUTCHECK_CONVERT_BOUNDS")), &bounds); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	out, remove, err := SpoolFile(filepath.Dir(name))
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	keys := os.Getenv("CUTCHECK_CONVERT_KEYS")
	_, f, err := FromDebeziumFiles([]DebeziumInput{{Name: name, R: in}}, out,
		DebeziumOptions{Table: "customers", MaxKey: json.RawMessage(keys), ChunkBounds: bounds, Mem: mem, Dir: filepath.Dir(name)})
	if err != nil || f != nil {
		t.Fatal(err, f)
	}
	peak := procStatus("VmHWM")
	out.Seek(0, io.SeekStart)
	res, err := Verify(out, Options{Mem: mem, Dir: filepath.Dir(name)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d %d %s\n", peak, res.Stats.Events, res.Line())
	os.Exit(0)
}

// --mem holds the converter too: a recording whose events would take
// about six times the budget in memory (0.8 KB an event before the sort)
// converts within the budget and a tenth, and its bundle is accepted on
// the whole table.
func TestConvertMemHeld(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("resident memory under the race detector is not the converter's")
	}
	const mem = 64 << 20
	keys, events := 100_000, 500_000
	name := filepath.Join(t.TempDir(), "topic.jsonl")
	bounds := dbzSynthFile(t, name, keys, events)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperConvertFile$")
	cmd.Env = append(os.Environ(), "CUTCHECK_CONVERT_FILE="+name, fmt.Sprintf("CUTCHECK_VERIFY_MEM=%d", mem),
		"CUTCHECK_CONVERT_BOUNDS="+string(mustJSON(bounds)), fmt.Sprintf("CUTCHECK_CONVERT_KEYS=%d", keys))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var peak, n int64
	if _, err := fmt.Sscanf(string(out), "%d %d", &peak, &n); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	line := strings.SplitN(strings.TrimSpace(string(out)), " ", 3)[2]
	t.Logf("--mem %d MiB: %d events, peak %d MiB: %.60s", mem>>20, n, peak>>20, line)
	if !strings.HasPrefix(line, "Accept") || n < int64(events) {
		t.Errorf("%d events: %s", n, line)
	}
	if peak > mem+mem/10 {
		t.Errorf("--mem %d MiB: peak resident memory %d MiB", mem>>20, peak>>20)
	}
}
