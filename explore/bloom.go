package explore

import "math/bits"

// bloom is a blocked Bloom filter over fingerprints: each key sets k bits
// in one 512-bit block, so a test reads one cache line. At 16 bits per key
// (k = 11) it answers "maybe" for about 0.1% of absent keys, at 8 bits for
// about 2%. The block is chosen by the key's high bits (multiply-shift), so
// testing keys in increasing order walks the filter forward.
type bloom struct {
	words []uint64 // 8 per block
	n     uint64   // blocks
	k     int      // bits set per key
}

// maxBloomBits is the bits per key a filter gets when memory allows.
const maxBloomBits = 16

// newBloom sizes a filter for keys at bitsPerKey (at least 2) bits each.
func newBloom(keys, bitsPerKey int) *bloom {
	bitsPerKey = max(bitsPerKey, 2)
	n := uint64(keys*bitsPerKey/512) + 1
	return &bloom{words: make([]uint64, 8*n), n: n, k: max(1, bitsPerKey*69/100)}
}

func (b *bloom) block(fp uint64) []uint64 {
	hi, _ := bits.Mul64(fp, b.n)
	return b.words[8*hi : 8*hi+8 : 8*hi+8]
}

// probes derives the bit positions by double hashing (a + i·b mod 512)
// from fp mixed by an odd multiplier, whose low bits the block choice does
// not use.
func probes(fp uint64) (a, b uint64) {
	h := fp * 0x9e3779b97f4a7c15
	return h >> 55, h>>46 | 1
}

func (b *bloom) add(fp uint64) {
	blk := b.block(fp)
	x, d := probes(fp)
	for range b.k {
		bit := x & 511
		blk[bit>>6] |= 1 << (bit & 63)
		x += d
	}
}

func (b *bloom) has(fp uint64) bool {
	blk := b.block(fp)
	x, d := probes(fp)
	for range b.k {
		bit := x & 511
		if blk[bit>>6]&(1<<(bit&63)) == 0 {
			return false
		}
		x += d
	}
	return true
}

func (b *bloom) bytes() int64 { return int64(len(b.words)) * 8 }
