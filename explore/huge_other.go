//go:build !linux

package explore

import "unsafe"

func adviseHuge(p unsafe.Pointer, n uintptr) {}
