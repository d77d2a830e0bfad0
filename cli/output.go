package cli

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// outFile is an output file the user named. It is checked before the
// search starts, so an unwritable path fails at once, not after an hour of
// search. A regular file appears whole or not at all: a temporary file made
// beside it is renamed over it once written. What is not a regular file is
// written in place, never replaced: "-" is standard output, a device such as
// /dev/null is opened before the search, a FIFO when written (opening it
// waits for a reader). A symbolic link is followed: what it points to is
// written, and the link stays; a link to nothing is refused.
type outFile struct {
	path  string    // as the user gave it, for messages
	tmp   *os.File  // regular: the temporary file, renamed over target
	dev   *os.File  // a device, opened in place
	fifo  string    // a FIFO, opened in place when written
	std   io.Writer // "-": standard output
	dest  string    // regular: where tmp goes (path, or its link's target)
	ready bool      // not yet written or discarded
}

// openOut prepares path for flag; "" means no file (a nil *outFile).
func openOut(flag, path string) (*outFile, error) {
	if path == "" {
		return nil, nil
	}
	o := &outFile{path: path, dest: path, ready: true}
	if path == "-" {
		o.std = os.Stdout
		return o, nil
	}
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is a symbolic link to nothing (%v); give a file name", flag, path, pathErr(err))
		}
		o.dest = real
	}
	fi, err := os.Stat(o.dest)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s: %s is a directory; give a file name", flag, path)
	case err == nil && fi.Mode()&fs.ModeNamedPipe != 0:
		o.fifo = o.dest
		return o, nil
	case err == nil && !fi.Mode().IsRegular():
		if o.dev, err = os.OpenFile(o.dest, os.O_WRONLY, 0); err != nil {
			return nil, fmt.Errorf("%s: cannot write %s: %v", flag, path, pathErr(err))
		}
		return o, nil
	}
	dir := filepath.Dir(o.dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create the directory for %s: %v", flag, path, pathErr(err))
	}
	// .NAME.tmp-PID-…: clean removes it once its process is gone
	f, err := os.CreateTemp(dir, fmt.Sprintf(".%s%s%d-*", filepath.Base(o.dest), tmpMark, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %v", flag, path, pathErr(err))
	}
	o.tmp = f
	return o, nil
}

// toStdout reports whether the file is standard output.
func (o *outFile) toStdout() bool { return o != nil && o.path == "-" }

// write fills the file and puts it in place.
func (o *outFile) write(fill func(w io.Writer) error) error {
	if o == nil || !o.ready {
		return nil
	}
	o.ready = false
	var err error
	switch {
	case o.std != nil:
		w := bufio.NewWriter(o.std)
		if err = fill(w); err == nil {
			err = w.Flush()
		}
	case o.tmp == nil:
		f := o.dev
		if f == nil {
			f, err = os.OpenFile(o.fifo, os.O_WRONLY, 0)
		}
		if err == nil {
			w := bufio.NewWriter(f)
			if err = fill(w); err == nil {
				err = w.Flush()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	default:
		tmp := o.tmp
		w := bufio.NewWriter(tmp)
		err = fill(w)
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
			err = os.Rename(tmp.Name(), o.dest)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %v", o.path, pathErr(err))
	}
	return nil
}

// discard drops the file unwritten (nothing to write, or interrupted).
func (o *outFile) discard() {
	if o == nil || !o.ready {
		return
	}
	o.ready = false
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
	if o.dev != nil {
		o.dev.Close()
	}
}

// tmpMark follows an output's name in its temporary file's.
const tmpMark = ".tmp-"

// staleOutputs removes from dir the temporary outputs (.NAME.tmp-PID-…) of
// processes that are gone, and says what it removed.
func staleOutputs(dir string) ([]string, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, ".*"+tmpMark+"*"))
	var did []string
	for _, p := range paths {
		base := filepath.Base(p)
		rest := base[strings.LastIndex(base, tmpMark)+len(tmpMark):]
		if _, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0]); err != nil || alive(rest) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(p); err != nil {
			return did, err
		}
		did = append(did, fmt.Sprintf("removed %s (%s), a partial output of process %s, which is no longer running", p, size(fi.Size()), strings.SplitN(rest, "-", 2)[0]))
	}
	return did, nil
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

// resultsSet is where reproduce writes: results/ is one set, written whole
// and swapped in whole. While the specs run, the set is written into a
// staging directory beside out, out.new-PID-XXXX (made before the first
// spec, so an unusable --out fails at once). A complete run then swaps it
// in by directory renames: out to out.old-PID-XXXX, the new set to out, and
// the old one removed. A kill at any point leaves out whole, old or new, or
// (between the two renames) no out and the old set in out.old-*, which the
// next run or clean puts back (cleanSets). An incomplete run's set becomes
// out.partial, and out is left as it was.
type resultsSet struct {
	out, stage string
}

// Names of the staging directories beside out.
const (
	newSet = ".new-"
	oldSet = ".old-"
)

func openResults(out string) (*resultsSet, []string, error) {
	out = filepath.Clean(out)
	if b := filepath.Base(out); b == "." || b == ".." || b == string(filepath.Separator) {
		return nil, nil, fmt.Errorf("--out: %s cannot be swapped for a new set; name a directory of its own, e.g. results", out)
	}
	fi, err := os.Stat(out)
	switch {
	case err == nil && !fi.IsDir():
		return nil, nil, fmt.Errorf("--out: %s is a file; give a directory", out)
	case err != nil && !os.IsNotExist(err):
		return nil, nil, fmt.Errorf("--out: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, nil, fmt.Errorf("--out: cannot create the directory for %s: %v", out, pathErr(err))
	}
	cleaned, err := cleanSets(out)
	if err != nil {
		return nil, cleaned, fmt.Errorf("--out: %v", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), fmt.Sprintf("%s%s%d-", filepath.Base(out), newSet, os.Getpid()))
	if err != nil {
		return nil, cleaned, fmt.Errorf("--out: cannot write beside %s: %v", out, pathErr(err))
	}
	os.Chmod(stage, 0o755) // it becomes the set
	return &resultsSet{out: out, stage: stage}, cleaned, nil
}

// partialDir is where an incomplete run's results go.
func (r *resultsSet) partialDir() string { return r.out + ".partial" }

// commit swaps the staged set in for out and removes the partial results
// an earlier interrupted run left, now superseded. Files the sets do not
// make (out's README.md) are carried over first.
func (r *resultsSet) commit() error {
	if data, err := os.ReadFile(filepath.Join(r.out, "README.md")); err == nil {
		if err := os.WriteFile(filepath.Join(r.stage, "README.md"), data, 0o644); err != nil {
			return err
		}
	}
	old := ""
	if _, err := os.Stat(r.out); err == nil {
		old = fmt.Sprintf("%s%s%d-%d", r.out, oldSet, os.Getpid(), time.Now().UnixNano())
		if err := os.Rename(r.out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(r.stage, r.out); err != nil {
		if old != "" {
			os.Rename(old, r.out) // put the old set back
		}
		return err
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return err
		}
	}
	return os.RemoveAll(r.partialDir())
}

// keepPartial makes the staged set the partial results and leaves out as
// it was before the run.
func (r *resultsSet) keepPartial() (string, error) {
	dst := r.partialDir()
	err := os.RemoveAll(dst)
	if err == nil {
		err = os.Rename(r.stage, dst)
	}
	r.undo()
	return dst, err
}

// undo removes the staging directory.
func (r *resultsSet) undo() { os.RemoveAll(r.stage) }

// cleanSets removes what killed reproduce runs left beside out: staging
// directories of runs whose process is gone, and the staging directories
// older versions left inside out. A swap killed between its two renames
// left no out and the old set in out.old-*: that set is put back. It
// returns what it did, one line each.
func cleanSets(out string) ([]string, error) {
	out = filepath.Clean(out)
	var did []string
	legacy, _ := filepath.Glob(filepath.Join(out, ".staging-*"))
	for _, p := range legacy {
		if err := os.RemoveAll(p); err != nil {
			return did, err
		}
		did = append(did, "removed "+p+", the staging directory of a reproduce that was killed")
	}
	_, outErr := os.Stat(out)
	for _, kind := range []string{oldSet, newSet} {
		stale, _ := filepath.Glob(out + kind + "*")
		for _, p := range stale {
			if alive(strings.TrimPrefix(p, out+kind)) {
				continue
			}
			if kind == oldSet && os.IsNotExist(outErr) {
				if err := os.Rename(p, out); err != nil {
					return did, err
				}
				outErr = nil
				did = append(did, "put back "+out+" from "+p+": a reproduce was killed while swapping in its results")
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return did, err
			}
			did = append(did, "removed "+p+", left by a reproduce that was killed")
		}
	}
	return did, nil
}

// alive reports whether the process whose id starts name ("PID-...") is
// running; a name without one is taken as a run that is gone.
func alive(name string) bool {
	pid, err := strconv.Atoi(strings.SplitN(name, "-", 2)[0])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
