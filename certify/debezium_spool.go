package certify

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// dbzSpool is the directory where the converter keeps on disk what it
// writes once and reads back later: the sort's runs of events, the files
// of debezium_order.go, and the bundle's log lines, which come before the
// header is known. The directory is made like the verifier's spill
// directory (owner file), so `cutcheck clean` removes one a killed run
// left behind.
type dbzSpool struct {
	dir   string
	owner *os.File
	log   *os.File
	logW  *bufio.Writer
}

func openDbzSpool(parent string) (*dbzSpool, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, spillDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("certify: spool directory: %w", err)
	}
	s := &dbzSpool{dir: dir}
	if s.owner, err = claimDir(dir); err == nil {
		s.log, err = os.Create(dir + "/log")
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.logW = bufio.NewWriterSize(s.log, 1<<20)
	return s, nil
}

// write appends log lines.
func (s *dbzSpool) write(b []byte) {
	s.logW.Write(b)
}

// copyLog writes the log lines to w.
func (s *dbzSpool) copyLog(w io.Writer) error {
	if err := s.logW.Flush(); err != nil {
		return err
	}
	if _, err := s.log.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.log)
	return err
}

// close removes the directory; the owner file's lock goes last.
func (s *dbzSpool) close() {
	if s.log != nil {
		s.log.Close()
	}
	os.RemoveAll(s.dir)
	if s.owner != nil {
		s.owner.Close()
	}
}

// SpoolFile makes a file for a converted bundle, in a fresh directory under
// dir (the system temporary directory if empty) marked as the spill
// directory is, so that `cutcheck clean` removes one a killed run left;
// remove closes the file and removes the directory.
func SpoolFile(dir string) (f *os.File, remove func(), err error) {
	s, err := openDbzSpool(dir)
	if err != nil {
		return nil, nil, err
	}
	s.log.Close()
	s.log = nil
	if f, err = os.Create(s.dir + "/bundle"); err != nil {
		s.close()
		return nil, nil, err
	}
	return f, func() { f.Close(); s.close() }, nil
}
