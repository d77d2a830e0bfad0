package cli

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// outFile is an output file the user named. It is checked before the
// search starts: its directory is created and a temporary file is made
// beside it, so an unwritable path fails at once, not after an hour of
// search. The file appears whole or not at all: the temporary file is
// renamed over it once written.
type outFile struct {
	path string
	tmp  *os.File
}

// openOut prepares path for flag; "" means no file (a nil *outFile).
func openOut(flag, path string) (*outFile, error) {
	if path == "" {
		return nil, nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s: %s is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create the directory for %s: %v", flag, path, pathErr(err))
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %v", flag, path, pathErr(err))
	}
	return &outFile{path: path, tmp: f}, nil
}

// write fills the file and puts it in place.
func (o *outFile) write(fill func(w io.Writer) error) error {
	if o == nil || o.tmp == nil {
		return nil
	}
	tmp := o.tmp
	o.tmp = nil
	w := bufio.NewWriter(tmp)
	err := fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %v", o.path, pathErr(err))
	}
	return nil
}

// discard drops the file unwritten (nothing to write, or interrupted).
func (o *outFile) discard() {
	if o != nil && o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
		o.tmp = nil
	}
}

// pathErr is err without the Go operation name ("open ...: permission
// denied" becomes "permission denied").
func pathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	if le, ok := err.(*os.LinkError); ok {
		return le.Err
	}
	return err
}

// resultsDir is where reproduce writes: while the specs run, into a
// staging directory inside out (made before the first spec, so an
// unusable --out fails at once); then, for a complete run, file by file
// into out by renaming, each file replaced whole. An incomplete run leaves
// out exactly as it was and its staging directory becomes out+".partial",
// replacing the partial results of any earlier interrupted run.
type resultsDir struct {
	out, stage string
	made       bool // out did not exist before this run
}

func openResults(out string) (*resultsDir, error) {
	fi, err := os.Stat(out)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("--out: %s is a file; give a directory", out)
	case err != nil && !os.IsNotExist(err):
		return nil, fmt.Errorf("--out: %v", err)
	}
	r := &resultsDir{out: out, made: err != nil}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("--out: cannot create %s: %v", out, pathErr(err))
	}
	if r.stage, err = os.MkdirTemp(out, ".staging-"); err != nil {
		r.undo()
		return nil, fmt.Errorf("--out: cannot write in %s: %v", out, pathErr(err))
	}
	os.Chmod(r.stage, 0o755) // it may become the partial results' directory
	return r, nil
}

// partialDir is where an incomplete run's results go.
func (r *resultsDir) partialDir() string {
	return strings.TrimRight(r.out, string(filepath.Separator)) + ".partial"
}

// commit moves every staged file into out and removes the partial results
// an earlier interrupted run left, now superseded.
func (r *resultsDir) commit() error {
	err := filepath.WalkDir(r.stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == r.stage {
			return err
		}
		rel, _ := filepath.Rel(r.stage, p)
		dst := filepath.Join(r.out, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		return os.Rename(p, dst)
	})
	if rerr := os.RemoveAll(r.stage); err == nil {
		err = rerr
	}
	if err == nil {
		err = os.RemoveAll(r.partialDir())
	}
	return err
}

// keepPartial makes the staged files the partial results and leaves out
// as it was before the run.
func (r *resultsDir) keepPartial() (string, error) {
	dst := r.partialDir()
	err := os.RemoveAll(dst)
	if err == nil {
		err = os.Rename(r.stage, dst)
	}
	r.undo()
	return dst, err
}

// undo removes the staging directory, and out itself if this run made it.
func (r *resultsDir) undo() {
	os.RemoveAll(r.stage)
	if r.made {
		os.Remove(r.out) // only if empty
	}
}
