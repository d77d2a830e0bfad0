//go:build unix

package explore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// claim writes dir's owner file and locks it for the life of the run. The
// lock is taken before the process id is written, so an owner file with an
// id and no lock has outlived its process.
func claim(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("explore: marking the disk tier directory: %w", err)
	}
	// Blocking: a RemoveOrphans looking at this directory holds the lock
	// for a moment, finds no id yet, and lets go.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("explore: locking the disk tier directory: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%d\n", os.Getpid()); err != nil {
		f.Close()
		return nil, fmt.Errorf("explore: marking the disk tier directory: %w", err)
	}
	return f, nil
}

// removeIfOrphan removes p if its owner file holds an id and no process
// holds its lock; it keeps the lock while removing, so two cleaners never
// race.
func removeIfOrphan(p string) (*Orphan, error) {
	f, err := os.OpenFile(filepath.Join(p, ownerFile), os.O_RDONLY, 0)
	if err != nil {
		return nil, nil // no owner file: not ours to judge
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, nil // held: its run is alive
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, nil // just created, the id not yet written
	}
	o := &Orphan{Path: p, PID: pid, Bytes: du(p)}
	if err := os.RemoveAll(p); err != nil {
		return nil, fmt.Errorf("explore: removing %s, left by process %d: %w", p, pid, err)
	}
	return o, nil
}

// lock locks dir's owner file for the life of a run that keeps files in
// dir from one run to the next (a checkpoint), refusing a directory a
// live run holds. The file stays when the run ends, unlocked.
func lock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("explore: locking %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := io.ReadAll(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("explore: %s is %w (process %s)", dir, ErrInUse, strings.TrimSpace(string(data)))
		}
		return nil, fmt.Errorf("explore: locking %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("explore: locking %s: %w", dir, err)
	}
	return f, nil
}
