//go:build !linux

package explore

func mapAnon(n int64) []byte  { return nil }
func unmap(b []byte)          {}
func dropPages(b []byte) bool { return false }
