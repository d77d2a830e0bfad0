//go:build !linux

package huge

import "unsafe"

// Advise does nothing where huge pages are not asked for this way.
func Advise(p unsafe.Pointer, n uintptr) {}
