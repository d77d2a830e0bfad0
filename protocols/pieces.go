package protocols

import "github.com/cutcheck/cutcheck/model"

// Steps of a capture shipped for a discipline of one's own (DefineMachine):
// each is one of the paper's moves on a model.Capture, written once.

// CopyAt copies chunk i (ChunkKeys) at the log's end r as one snapshot, as
// a row copier copies under its rows' locks: the point unit (r, r] with
// the rows read at r, each present row emitted as a copy tagged r, closed
// as made.
func CopyAt(c *model.Capture, i int, cfg *Config) {
	r := c.Log.Len()
	u := model.Unit{Domain: ChunkKeys(i, cfg.Keys, cfg.Chunks), Lo: r, Hi: r}
	for k := range u.Domain.Keys() {
		u.Refresh[k], c.ReadAt[k], u.Read = c.Log.Sigma(r, k), r, u.Read.With(k)
		if u.Refresh[k] != model.Absent {
			c.EmitCopy(k, u.Refresh[k], r)
		}
	}
	c.Plan.Add(u)
	c.Closed |= 1 << (c.Plan.N - 1)
}

// ConsumeNext moves the consumer one position on and emits the event there
// when it is a row of the captured keys (a marker is not): the stream
// applied as it comes.
func ConsumeNext(c *model.Capture, cfg *Config) {
	c.Pos++
	if e := c.Log.At(c.Pos); e.Key < model.Key(cfg.Keys) {
		c.Emit(e.Key, e.Img, c.Pos)
	}
}
