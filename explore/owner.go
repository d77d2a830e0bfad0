package explore

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A run's disk-tier directory holds an owner file: the run's process id,
// under an exclusive lock the run holds until it has removed the directory.
// A run killed with SIGKILL cannot remove its directory, but the kernel
// drops its lock, so a directory whose owner file is unlocked belongs to
// a run that is gone. Directories without an owner file (made by older
// versions or by other programs) are never judged orphans: nothing says
// whether their owner still runs.
const ownerFile = "owner"

// dirPrefix starts the name of every run's directory.
const dirPrefix = "cutcheck-"

// Orphan is a disk-tier directory left behind by a run that ended without
// removing it.
type Orphan struct {
	Path  string
	PID   int   // the process that made it, no longer running
	Bytes int64 // what its files held
}

// RemoveOrphans removes from dir (the system temporary directory when dir
// is empty) every disk-tier directory whose owner is no longer running, and
// returns what it removed. Directories of live runs, directories without an
// owner file and everything else in dir are left alone, so runs may share
// a --dir.
func RemoveOrphans(dir string) ([]Orphan, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Orphan
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		o, err := removeIfOrphan(p)
		if err != nil {
			return out, err
		}
		if o != nil {
			out = append(out, *o)
		}
	}
	return out, nil
}

// du is the total size of the files under p.
func du(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
