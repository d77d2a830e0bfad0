package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
)

// Every protocol's symmetry is value renaming (model.Namer): the values
// 1..V are symbols (§2.1). The source commits every value other than a
// key's current one, the captures copy values and test them only for
// equality and against ⊥, and so do the invariants, the sometimes-
// properties and every fault (a scan that skips "the first present row"
// picks it by key, not by value). Renaming the values of a state therefore
// renames its successors and keeps every verdict; explore.Options.Symmetry
// counts states up to it.
//
// The canonical form names values by first appearance, scanning the
// initial store first. With initial "any" or an empty store the initial
// states are closed under renaming, as the symmetry needs. With a fixed
// store they are not ({k0 = 1} renamed is {k0 = 2}), but the reduction is
// still sound: the initial store is the same in every reachable state and
// is scanned first, so two reachable states with one canonical form differ
// by a renaming that fixes every value of the initial store, and such a
// renaming maps the initial state to itself and so reachable states to
// reachable states. The classes are then those of the renamings that fix
// the initial store's values, with no other change.
//
// The argument holds for the published parts and the shipped faults, not
// for a part a variant supplies: a window, a read, a gate or an onset
// receives values and may depend on which is which (a window off by one
// only when the chunk read value 2 breaks the renaming, and the reduction
// then hides its violation). A protocol built from such a part keeps the
// renaming only if its parts declare ValueBlind; otherwise a run up to the
// symmetry is refused (SymmetryError), and explore.Options.CheckSymmetry
// checks a declaration state by state.
//
// The canonical form is each protocol's Layout.Canonical: control state
// holding values (the fields declared as Rows) is scanned after the
// Capture. Classic, parallel, dump and composite keep buffered rows' values
// in the units' refreshes, so only readonly's split transaction declares
// any. Watermark markers name chunks, not values, and are never renamed.

// SymmetryError refuses value renaming for a protocol one of whose parts
// receives values and is not declared value-blind. It wraps
// explore.ErrNoSymmetry.
type SymmetryError struct {
	Protocol string
	Part     string // the part, e.g. "Window"
}

func (e *SymmetryError) Error() string {
	return fmt.Sprintf("%s has no symmetry: its part %s receives values and is not declared ValueBlind (--check-symmetry checks such a declaration)", e.Protocol, e.Part)
}

func (e *SymmetryError) Unwrap() error { return explore.ErrNoSymmetry }

// valueSeer is a protocol's parts: valueSeeing names the first part set
// that receives values, "" when none is or the parts are ValueBlind.
type valueSeer interface{ valueSeeing() string }

// withParts records on p what its parts say of value renaming.
func withParts(parts valueSeer, p *Protocol) *Protocol {
	p.valueSeeing = parts.valueSeeing()
	return p
}

func (p ClassicParts) valueSeeing() string {
	switch {
	case p.ValueBlind:
		return ""
	case p.Window != nil:
		return "Window"
	}
	return ""
}

func (p ReadonlyParts) valueSeeing() string {
	switch {
	case p.ValueBlind:
		return ""
	case p.Read != nil:
		return "Read"
	case p.Sample != nil:
		return "Sample"
	}
	return ""
}

func (p ParallelParts) valueSeeing() string {
	switch {
	case p.ValueBlind:
		return ""
	case p.Gate != nil:
		return "Gate"
	case p.Window != nil:
		return "Window"
	case p.ReaderStart != nil:
		return "ReaderStart"
	case p.ReaderStartAt != nil:
		return "ReaderStartAt"
	case p.Read != nil:
		return "Read"
	}
	return ""
}

func (p DumpParts) valueSeeing() string {
	switch {
	case p.ValueBlind:
		return ""
	case p.Claim != nil:
		return "Claim"
	}
	return ""
}

func (p CompositeParts) valueSeeing() string {
	switch {
	case p.ValueBlind:
		return ""
	case p.Onset != nil:
		return "Onset"
	}
	return ""
}
