package protocols

// Coordinates past small numbers. A coordinate is a prefix length (Def.
// 2.1); a real log names its positions with numbers that start wherever
// retention starts, past 9 and past 255. Config.CoordBase makes the log's
// first position the base: the states keep counting from 1 (the shift is
// the log's, model.Log.Shift, and every state of a run carries the same
// one), so the state graph, and every count, is base 1's; the positions
// leave the model as the log names them (model.Log.Offset) where a sink
// rule compares them and where traces show them.

import (
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/model"
)

// MaxCoordBase is the largest coordinate base: the shift is two bytes, and
// a base of 65534 still crosses 65535 → 65536.
const MaxCoordBase = 1 << 16

// shift is the log's shift under cfg: its first position less one.
func (cfg *Config) shift() uint16 {
	if cfg.CoordBase <= 1 {
		return 0
	}
	return uint16(cfg.CoordBase - 1)
}

// checkShift refuses a coordinate base on a model whose initial states do
// not carry it (InitialCaptures gives it to them), or that holds no
// model.Capture, rather than check base 1 in its place.
func checkShift[S, A any](m explore.Machine[S, A], shift uint16) error {
	if shift == 0 {
		return nil
	}
	capOf, err := model.CaptureOf[S]()
	if err != nil {
		return fmt.Errorf("coord-base %d: %w", int(shift)+1, err)
	}
	for _, s := range m.Init() {
		if capOf(&s).Log.Shift != shift {
			return fmt.Errorf("coord-base %d: the model's initial states do not carry it (build them with InitialCaptures)", int(shift)+1)
		}
	}
	return nil
}
