package protocols

import "github.com/cutcheck/cutcheck/model"

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
// Control state holding values is scanned after the Capture: classic,
// parallel, dump and composite keep buffered rows' values in the units'
// refreshes, so only readonly's split transaction adds any. Watermark
// markers name chunks, not values, and are never renamed.

// Canonical names the state's values by first appearance.
func (m *classic) Canonical(s *classicState) classicState {
	t := *s
	var n model.Namer
	t.Cap.NameValues(&n)
	return t
}

// Canonical names the state's values by first appearance, then those of
// the rows of a split transaction not yet appended.
func (m *readonly) Canonical(s *readonlyState) readonlyState {
	t := *s
	var n model.Namer
	t.Cap.NameValues(&n)
	for i := range t.Pending.Ev {
		t.Pending.Ev[i].Img = n.Name(t.Pending.Ev[i].Img)
	}
	return t
}

// Canonical names the state's values by first appearance.
func (m *parallel) Canonical(s *parallelState) parallelState {
	t := *s
	var n model.Namer
	t.Cap.NameValues(&n)
	return t
}

// Canonical names the state's values by first appearance.
func (m *dump) Canonical(s *dumpState) dumpState {
	t := *s
	var n model.Namer
	t.Cap.NameValues(&n)
	return t
}

// Canonical names the state's values by first appearance.
func (m *composite) Canonical(s *compositeState) compositeState {
	t := *s
	var n model.Namer
	t.Cap.NameValues(&n)
	return t
}
