//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Two runs sharing a --dir with --resume: the second is refused (exit 2)
// while the first holds the checkpoint.
func TestResumeRefusesDirInUse(t *testing.T) {
	base := []string{"check", "classic", "--keys", "2", "--values", "2", "--events", "2", "--chunks", "2", "--txn", "1", "--progress", "0"}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "checkpoint")
	if code, _, _ := runCLI(append(base, "--dir", dir, "--resume", "--max-depth", "3")...); code != exitIncomplete {
		t.Fatalf("stopped run: exit %d", code)
	}
	held, err := os.OpenFile(filepath.Join(ckpt, "owner"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(append(base, "--dir", dir, "--resume")...)
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "in use by a live run") {
		t.Errorf("a directory in use: exit %d %q", code, stderr)
	}
}
