package protocols

import (
	"fmt"

	"github.com/cutcheck/cutcheck/model"
)

// Marker returns the out-of-scope event a protocol writes into the log as a
// watermark for chunk (0-based): its image only names it for display.
func Marker(chunk int, high bool) model.Event {
	img := model.Value(2*chunk + 1)
	if high {
		img++
	}
	return model.Event{Key: model.NoKey, Img: img}
}

// MarkerName is "L1", "H1", ... for a marker event's image.
func MarkerName(img model.Value) string {
	if img == 0 {
		return "M"
	}
	chunk := (int(img)-1)/2 + 1
	if img%2 == 1 {
		return fmt.Sprintf("L%d", chunk)
	}
	return fmt.Sprintf("H%d", chunk)
}

// markerChunk decodes a watermark event: its chunk (0-based) and whether it
// is the high one.
func markerChunk(e model.Event) (chunk int, high bool) {
	return (int(e.Img) - 1) / 2, e.Img%2 == 0
}
