package certify

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// dbzSpool keeps on disk what the converter writes once and reads back
// later: the events' raw row images, written as the recording is read and
// read back one event at a time after the merge by position, and the
// bundle's log lines, which come before the header is known. In memory an
// event is then its place in the order and a few interned names. The
// directory is made like the verifier's spill directory (owner file), so
// `cutcheck clean` removes one a killed run left behind.
type dbzSpool struct {
	dir        string
	owner      *os.File
	img, log   *os.File
	imgW, logW *bufio.Writer
	imgAt      int64
	buf        []byte
	// win is the part of the images file read last, from winAt; served
	// is how much of it images has handed out.
	win           []byte
	winAt, served int64
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
		if s.img, err = os.Create(dir + "/images"); err == nil {
			s.log, err = os.Create(dir + "/log")
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.imgW, s.logW = bufio.NewWriterSize(s.img, 1<<20), bufio.NewWriterSize(s.log, 1<<20)
	return s, nil
}

// putImages stores an event's two images; the offset and lengths find them.
func (s *dbzSpool) putImages(before, after []byte) (at int64, err error) {
	at = s.imgAt
	if _, err = s.imgW.Write(before); err == nil {
		_, err = s.imgW.Write(after)
	}
	s.imgAt += int64(len(before) + len(after))
	return at, err
}

// images reads them back (after the last putImages).
func (s *dbzSpool) images(at int64, nb, na int32) (before, after []byte, err error) {
	if s.imgW.Buffered() > 0 {
		if err := s.imgW.Flush(); err != nil {
			return nil, nil, err
		}
	}
	n := int64(nb + na)
	if at < s.winAt || at+n > s.winAt+int64(len(s.win)) {
		// Events are placed mostly in the order they were read: read
		// ahead, four times what the last window served (so a jump
		// between distant events reads little), at most 256 KiB.
		size := min(max(n, 4*s.served), 256<<10)
		if int64(cap(s.buf)) < size {
			s.buf = make([]byte, size)
		}
		got, err := s.img.ReadAt(s.buf[:size], at)
		if int64(got) < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, err
		}
		s.win, s.winAt, s.served = s.buf[:got], at, 0
	}
	b := s.win[at-s.winAt : at-s.winAt+n]
	s.served += n
	return b[:nb], b[nb:], nil
}

// line appends a log line.
func (s *dbzSpool) line(l string) error {
	s.logW.WriteString(l)
	return s.logW.WriteByte('\n')
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
	for _, f := range []*os.File{s.img, s.log} {
		if f != nil {
			f.Close()
		}
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
	s.img.Close()
	s.log.Close()
	s.img, s.log = nil, nil
	if f, err = os.Create(s.dir + "/bundle"); err != nil {
		s.close()
		return nil, nil, err
	}
	return f, func() { f.Close(); s.close() }, nil
}
