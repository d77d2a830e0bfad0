//go:build unix

package certify

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// claimDir writes dir's owner file, locked for the life of the run, as the
// explorer does (explore/owner_unix.go): the lock is taken before the
// process id is written, so an id without a lock has outlived its process.
func claimDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "owner"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("certify: marking the spill directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("certify: locking the spill directory: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%d\n", os.Getpid()); err != nil {
		f.Close()
		return nil, fmt.Errorf("certify: marking the spill directory: %w", err)
	}
	return f, nil
}
