//go:build unix

package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Reference: issue 21, finding 8. An output is written where the user
// pointed, never replacing what is there: "-" is standard output (and the
// report's text moves to standard error), a FIFO is written in place, a
// symbolic link is followed and stays a link, a link to nothing is refused.
func TestOutputTargets(t *testing.T) {
	tiny := []string{"check", "classic", "--keys", "1", "--values", "1", "--events", "1", "--chunks", "1", "--progress", "0"}
	dir := t.TempDir()
	t.Chdir(dir)
	isReport := func(t *testing.T, data string) {
		t.Helper()
		var rep struct{ Verdict string }
		if err := json.Unmarshal([]byte(data), &rep); err != nil || rep.Verdict == "" {
			t.Errorf("not a JSON report (%v): %q", err, data)
		}
	}

	t.Run("stdout", func(t *testing.T) {
		code, stdout, stderr := runCLI(append(tiny, "--json", "-")...)
		if code != exitOK || !strings.Contains(stderr, "verdict:") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		isReport(t, stdout)
		if _, err := os.Lstat("-"); !os.IsNotExist(err) {
			t.Errorf("a file named - was made: %v", err)
		}
		if code, _, stderr := runCLI(append(tiny, "--json", "-", "--html", "-")...); code != exitUsage || !strings.Contains(stderr, "only one output can be -") {
			t.Errorf("two outputs to stdout: exit %d, %q", code, stderr)
		}
	})

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip("no FIFO here:", err)
		}
		got := make(chan string)
		go func() {
			data, _ := os.ReadFile(fifo) // waits for the writer
			got <- string(data)
		}()
		if code, stdout, stderr := runCLI(append(tiny, "--json", fifo)...); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		isReport(t, <-got)
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
		}
	})

	t.Run("device", func(t *testing.T) {
		// Not as root: a build that renames over its target would replace
		// the machine's /dev/null; anyone else it fails, which the test sees.
		if os.Getuid() == 0 {
			t.Skip("as root a regression would replace /dev/null; the FIFO case covers writing in place")
		}
		if code, _, stderr := runCLI(append(tiny, "--json", os.DevNull)...); code != exitOK {
			t.Fatalf("exit %d, %q", code, stderr)
		}
		if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("%s is no longer a device: %v %v", os.DevNull, fi.Mode(), err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
		os.WriteFile(target, []byte("old"), 0o644)
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		if code, _, stderr := runCLI(append(tiny, "--json", link)...); code != exitOK {
			t.Fatalf("exit %d, %q", code, stderr)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v", err)
		}
		data, _ := os.ReadFile(target)
		isReport(t, string(data))
		dangling := filepath.Join(dir, "dangling.json")
		os.Symlink(filepath.Join(dir, "nowhere", "x.json"), dangling)
		if code, _, stderr := runCLI(append(tiny, "--json", dangling)...); code != exitUsage || !strings.Contains(stderr, "symbolic link to nothing") {
			t.Errorf("a link to nothing: exit %d, %q", code, stderr)
		}
	})
}
