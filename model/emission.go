package model

// Digest is what a capture keeps of its emitted stream for the
// exact-emission check: how many entries each key received and one sum over
// every entry, each mixed with its key, value, tag and its index among its
// key's entries. Two streams with the same entries key by key, each key's
// in the same order, have the same digest, whatever the order across keys
// (a per-key fold cannot tell it, Def. 6.1); any other difference changes
// it but for a 64-bit collision.
type Digest struct {
	N   [MaxKeys]uint8 // entries per key (mod 256)
	Sum uint64
}

// Add folds the next entry of the stream in.
func (d *Digest) Add(e Entry) {
	d.Sum += mixEntry(e, d.N[e.Key])
	d.N[e.Key]++
}

// Digest is the digest of s.
func (s Stream) Digest() Digest {
	var d Digest
	for _, e := range s {
		d.Add(e)
	}
	return d
}

// mixEntry is splitmix64's finalizer over the entry and its index: a fixed,
// well-spread 64-bit value.
func mixEntry(e Entry, i uint8) uint64 {
	x := uint64(e.Key) | uint64(e.Val)<<8 | uint64(e.Tag)<<16 | uint64(i)<<24 | 1<<32
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
