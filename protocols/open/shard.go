package open

import "github.com/cutcheck/cutcheck/protocols"

// ShardKey makes each discipline an explore.Sharder. Their sources commit
// whole transactions through Log.Commit and never rewrite the log or its
// initial store, so the shipped protocols' key stays fixed along every path
// here too (protocols.ShardKey); what differs between the disciplines is
// the capture, which the key leaves out.

func (m *keyrange) ShardKey(s *krState, d int) (uint64, bool)   { return protocols.ShardKey(&s.Cap, d) }
func (m *reread) ShardKey(s *rereadState, d int) (uint64, bool) { return protocols.ShardKey(&s.Cap, d) }
func (m *rewind) ShardKey(s *rewindState, d int) (uint64, bool) { return protocols.ShardKey(&s.Cap, d) }
func (m *versionmax) ShardKey(s *vmState, d int) (uint64, bool) { return protocols.ShardKey(&s.Cap, d) }
