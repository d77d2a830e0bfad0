package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// workDir is the directory of a run's files, created on first use: a fresh
// "cutcheck-*" directory inside Options.Dir, or inside the system temporary
// directory when Dir is empty. It is removed with everything in it when the
// run ends, however it ends; Options.Dir itself is left in place. While
// the run lasts, the directory's owner file is locked (see owner.go), so a
// directory a killed run leaves behind can be told from a live one.
type workDir struct {
	mu     sync.Mutex
	parent string
	path   string
	owner  *os.File
	files  int
}

func (d *workDir) get() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		p, err := os.MkdirTemp(d.parent, dirPrefix)
		if err != nil {
			return "", fmt.Errorf("explore: creating the disk tier directory: %w", err)
		}
		owner, err := claim(p)
		if err != nil {
			os.RemoveAll(p)
			return "", err
		}
		d.path, d.owner = p, owner
	}
	return d.path, nil
}

// sub creates a subdirectory for a component with its own files.
func (d *workDir) sub(name string) (string, error) {
	p, err := d.get()
	if err != nil {
		return "", err
	}
	p = filepath.Join(p, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		return "", fmt.Errorf("explore: %w", err)
	}
	return p, nil
}

// create opens a new file named after name.
func (d *workDir) create(name string) (*os.File, error) {
	p, err := d.get()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.files++
	n := d.files
	d.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(p, fmt.Sprintf("%s-%d", name, n)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return f, nil
}

// removeFile closes and deletes a file made by create.
func (d *workDir) removeFile(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// remove deletes the run's directory.
func (d *workDir) remove() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		return nil
	}
	err := os.RemoveAll(d.path)
	if d.owner != nil {
		d.owner.Close() // only now: the lock guards the directory until it is gone
	}
	d.path, d.owner = "", nil
	return err
}
