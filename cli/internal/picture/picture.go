// Package picture draws a counterexample trace as one self-contained HTML
// page, in the manner of the paper's Figure 1: the commit-ordered log as a row
// of cells, each unit's bracket (lo, hi] as a band over the cells with the
// latent read position of every key it read, the consumer's position, and the
// replay of the emitted stream against σ, the key(s) the violated property
// names in red. Step buttons and a slider walk the trace state by state.
//
// The work is split as in porcupine: buildView turns a trace into plain page
// data (what the tests compare), and WriteHTML lays it out and fills the
// embedded template. Every step's picture is drawn here, in Go, from that
// step's View; the page's script only swaps the drawn steps, so the page reads
// the same with scripts off (it then shows the last step).
package picture

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/protocols"
)

//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
	"sub": func(a, b int) int { return a - b },
}).Parse(pageHTML))

// WriteHTML writes tr as one HTML file: inline SVG, CSS and script, no
// external assets. The last step is drawn into the static page.
func WriteHTML(w io.Writer, title string, tr *explore.TraceReport) error {
	return WriteHTMLAll(w, title, []*explore.TraceReport{tr})
}

// WriteHTMLAll writes the first of trs as WriteHTML does, above a table of
// every one of them: the consequences of one run, worst first.
func WriteHTMLAll(w io.Writer, title string, trs []*explore.TraceReport) error {
	if len(trs) == 0 {
		return errors.New("picture: no trace to draw")
	}
	d, err := buildView(trs[0])
	if err != nil {
		return err
	}
	d.Title = title
	if len(trs) > 1 {
		for _, tr := range trs {
			d.Consequences = append(d.Consequences, consequence{tr.Property, tr.Class, len(tr.Steps) - 1, tr.Reason})
		}
	}
	panels := make([]template.HTML, len(d.Steps))
	for i := range d.Steps {
		var b bytes.Buffer
		if err := page.ExecuteTemplate(&b, "panel", layoutStep(&d, i)); err != nil {
			return fmt.Errorf("picture: drawing step %d: %w", i, err)
		}
		panels[i] = template.HTML(b.String())
	}
	// The script swaps in the drawn steps; the page data rides along so the
	// file also carries the trace as data. json.Marshal escapes <, > and &,
	// so the blob cannot end its <script>.
	blob, err := json.Marshal(struct {
		Page   pageData        `json:"page"`
		Panels []template.HTML `json:"panels"`
	}{d, panels})
	if err != nil {
		return fmt.Errorf("picture: encoding the trace: %w", err)
	}
	last := len(d.Steps) - 1
	return page.Execute(w, struct {
		Page  pageData
		Last  int
		Panel template.HTML
		Blob  template.JS
	}{d, last, panels[last], template.JS(blob)})
}

// pageData is a trace as the page shows it, free of layout.
type pageData struct {
	Title    string     `json:"title"`
	Property string     `json:"property"`
	Cite     string     `json:"cite"`
	Kind     string     `json:"kind"`
	Reason   string     `json:"reason"`
	Steps    []stepData `json:"steps"`
	// Consequences lists every property a run found violated, the drawn
	// one first (a run that reports every consequence).
	Consequences []consequence `json:"consequences,omitempty"`
}

// consequence is one violated property of the run, in the table.
type consequence struct {
	Property string `json:"property"`
	Class    string `json:"class"`
	Steps    int    `json:"steps"`
	Reason   string `json:"reason"`
}

// stepData is one state of the trace and the action that led to it.
type stepData struct {
	Action string          `json:"action"` // "initial state" for the first
	Fields []explore.Field `json:"fields"`
	Pic    *picData        `json:"pic,omitempty"` // nil: the step has no View
}

// picData is one state as a picture: Figure 1's parts, in data.
type picData struct {
	Cells    []cellData `json:"cells"`
	Units    []unitData `json:"units"`
	Consumed int        `json:"consumed"` // positions 1..Consumed processed
	Start    int        `json:"start"`    // consumption start s0
	Keys     []keyData  `json:"keys"`     // replay (or sink) vs σ, one per key
	// Sink names the sink's merge rule when Keys holds what the sink holds
	// (protocols.View.Sink), which the replay and cut claims judge.
	Sink    string          `json:"sink,omitempty"`
	Control []explore.Field `json:"control,omitempty"`
	// Shift is what the log's names add to a position (protocols.View.
	// CoordBase less one): the picture is laid out by prefix length and
	// labelled with the names.
	Shift int `json:"shift,omitempty"`
}

// Cell kinds.
const (
	kindData   = "data"
	kindDelete = "delete"
	kindLow    = "low"  // L1, L2, ...: a low watermark
	kindHigh   = "high" // H1, H2, ...: a high watermark
	kindMarker = "marker"
)

// cellData is the log event at one position.
type cellData struct {
	Pos   int    `json:"pos"`
	Kind  string `json:"kind"`
	Text  string `json:"text"` // "k1=2", "k0=⊥", "L1"
	Txn   string `json:"txn"`  // "t2"; "" for a marker
	Key   int    `json:"key"`  // -1 for a marker
	Wrong bool   `json:"wrong"`
}

// unitData is one unit's bracket (Lo, Hi] and its reads.
type unitData struct {
	Unit   int        `json:"unit"` // 1-based, as in the trace text
	Keys   string     `json:"keys"` // "{k0 k1}"
	Lo     int        `json:"lo"`
	Hi     int        `json:"hi"`
	Open   bool       `json:"open"`    // not closed yet
	HiOpen bool       `json:"hi_open"` // high edge not recorded yet (Hi < Lo)
	Reads  []readData `json:"reads"`
}

// readData is one key's read and the latent position it reflects.
type readData struct {
	Key   int    `json:"key"`
	Text  string `json:"text"` // "k0=5"
	At    int    `json:"at"`
	Wrong bool   `json:"wrong"`
}

// keyData is one key's replayed value against σ at the consumer's position
// or, for the violation's key, at the coordinate the failure judges it.
type keyData struct {
	Key     int    `json:"key"`
	Name    string `json:"name"`
	Replay  string `json:"replay"`
	Tag     int    `json:"tag"`
	Source  string `json:"source"` // σ_At(key)
	At      int    `json:"at"`
	Differs bool   `json:"differs"` // replay ≠ Source
	Wrong   bool   `json:"wrong"`   // the violation's key (last step only)
}

// buildView turns a trace into page data. Views may be protocols.View values
// (or pointers to them) or their JSON form (map[string]any, raw JSON); a step
// without a View shows its fields only.
func buildView(tr *explore.TraceReport) (pageData, error) {
	if tr == nil || len(tr.Steps) == 0 {
		return pageData{}, errors.New("picture: the trace has no steps")
	}
	d := pageData{Property: tr.Property, Cite: tr.Cite, Kind: tr.Kind, Reason: tr.Reason}
	for i, s := range tr.Steps {
		st := stepData{Action: s.Action, Fields: s.Fields}
		if i == 0 && st.Action == "" {
			st.Action = "initial state"
		}
		v, ok, err := asView(s.View)
		if err != nil {
			return pageData{}, fmt.Errorf("picture: step %d: %w", i, err)
		}
		if ok {
			st.Pic = picture(v)
		}
		d.Steps = append(d.Steps, st)
	}
	if p := d.Steps[len(d.Steps)-1].Pic; p != nil {
		first, _, _ := asView(tr.Steps[0].View)
		last, _, _ := asView(tr.Steps[len(tr.Steps)-1].View)
		markWrong(p, tr.Reason)
		markJudged(p, tr.Reason, first.Source, last.Log)
	}
	return d, nil
}

func asView(v any) (protocols.View, bool, error) {
	switch v := v.(type) {
	case nil:
		return protocols.View{}, false, nil
	case protocols.View:
		return v, true, nil
	case *protocols.View:
		if v == nil {
			return protocols.View{}, false, nil
		}
		return *v, true, nil
	case json.RawMessage:
		return decodeView(v)
	case []byte:
		return decodeView(v)
	}
	// map[string]any from a JSON trace, or any value of the same shape.
	b, err := json.Marshal(v)
	if err != nil {
		return protocols.View{}, false, fmt.Errorf("view of type %T: %w", v, err)
	}
	return decodeView(b)
}

func decodeView(b []byte) (protocols.View, bool, error) {
	var v protocols.View
	if err := json.Unmarshal(b, &v); err != nil {
		return v, false, fmt.Errorf("view is not a protocols.View: %w", err)
	}
	return v, true, nil
}

func picture(v protocols.View) *picData {
	p := &picData{Consumed: v.Consumed, Start: v.Start, Shift: max(v.CoordBase-1, 0)}
	for _, e := range v.Log {
		c := cellData{Pos: e.Pos, Key: e.Key}
		switch {
		case e.Marker != "" || e.Key < 0:
			c.Key, c.Text, c.Kind = -1, e.Marker, kindMarker
			if strings.HasPrefix(e.Marker, "L") {
				c.Kind = kindLow
			} else if strings.HasPrefix(e.Marker, "H") {
				c.Kind = kindHigh
			}
		default:
			c.Text, c.Txn, c.Kind = keyName(e.Key)+"="+value(e.Value), "t"+strconv.Itoa(e.Txn), kindData
			if e.Value == 0 {
				c.Kind = kindDelete
			}
		}
		p.Cells = append(p.Cells, c)
	}
	for i, u := range v.Units {
		ud := unitData{Unit: i + 1, Lo: u.Lo, Hi: u.Hi, Open: !u.Closed, HiOpen: u.Hi < u.Lo}
		names := make([]string, len(u.Keys))
		for j, k := range u.Keys {
			names[j] = keyName(k)
		}
		ud.Keys = "{" + strings.Join(names, " ") + "}"
		for _, r := range u.Reads {
			ud.Reads = append(ud.Reads, readData{Key: r.Key, Text: keyName(r.Key) + "=" + value(r.Value), At: r.At})
		}
		p.Units = append(p.Units, ud)
	}
	src := map[int]int{}
	for _, kv := range v.Source {
		src[kv.Key] = kv.Value
	}
	rows := v.Replay
	if len(v.Sink) > 0 {
		rows, p.Sink = v.Sink, v.SinkRule
	}
	for _, kv := range rows {
		p.Keys = append(p.Keys, keyData{Key: kv.Key, Name: keyName(kv.Key), Replay: value(kv.Value), Tag: kv.Tag,
			Source: value(src[kv.Key]), At: v.Consumed, Differs: kv.Value != src[kv.Key]})
	}
	for name, val := range v.Control {
		p.Control = append(p.Control, explore.Field{Name: name, Value: val})
	}
	sort.Slice(p.Control, func(i, j int) bool { return p.Control[i].Name < p.Control[j].Name })
	return p
}

var keyRef = regexp.MustCompile(`\bk(\d+)\b`)

// markWrong marks the keys the violation is about: those its reason names,
// else those whose replay differs from σ.
func markWrong(p *picData, reason string) {
	wrong, differ := map[int]bool{}, map[int]bool{}
	for _, kd := range p.Keys {
		differ[kd.Key] = kd.Differs
	}
	for _, m := range keyRef.FindAllStringSubmatch(reason, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil {
			if _, ok := differ[k]; ok {
				wrong[k] = true
			}
		}
	}
	if len(wrong) == 0 {
		wrong = differ
	}
	for i := range p.Keys {
		p.Keys[i].Wrong = wrong[p.Keys[i].Key]
	}
	for i := range p.Cells {
		p.Cells[i].Wrong = p.Cells[i].Key >= 0 && wrong[p.Cells[i].Key]
	}
	for i := range p.Units {
		for j := range p.Units[i].Reads {
			p.Units[i].Reads[j].Wrong = wrong[p.Units[i].Reads[j].Key]
		}
	}
}

var sigmaRef = regexp.MustCompile(`σ_(\d+)`)

// markJudged moves the violation's keys' σ to the coordinate the failure
// judges them at, when its reason names one (σ_g) other than the
// consumer's position: closed-unit-cut judges a closed unit's keys at
// max(position, hi). base is the store before the log.
func markJudged(p *picData, reason string, base []protocols.KeyValue, log []protocols.EventView) {
	m := sigmaRef.FindStringSubmatch(reason)
	if m == nil {
		return
	}
	g, err := strconv.Atoi(m[1])
	if err != nil || g == p.Consumed {
		return
	}
	for i := range p.Keys {
		k := &p.Keys[i]
		if !k.Wrong {
			continue
		}
		sigma := 0
		for _, kv := range base {
			if kv.Key == k.Key {
				sigma = kv.Value
			}
		}
		for _, e := range log {
			if e.Pos <= g && e.Marker == "" && e.Key == k.Key {
				sigma = e.Value
			}
		}
		k.At, k.Source = g, value(sigma)
		k.Differs = k.Source != k.Replay
	}
}

func keyName(k int) string { return "k" + strconv.Itoa(k) }

func value(v int) string {
	if v == 0 {
		return "⊥"
	}
	return strconv.Itoa(v)
}

// Layout, in SVG user units. Coordinate c (a prefix length) is the boundary
// after cell c, so cell p spans [bx(p-1), bx(p)] and a window (lo, hi] spans
// [bx(lo), bx(hi)]: the lo cell lies outside it, the hi cell inside.
const (
	padL   = 96  // room for the row labels
	padR   = 64  //
	cellW  = 88  // one log position
	cellH  = 48  //
	labelH = 16  // a unit's caption, above its band
	bandH  = 18  // a unit's band
	readH  = 14  // one row of read labels, under a band
	laneGp = 10  // between units
	keyW   = 112 // one key's replay/σ column
	boxH   = 26  // a replay or σ box
)

func bx(c int) int { return padL + c*cellW }

// stepLayout is one step placed for the template.
type stepLayout struct {
	N, Of int // 0-based index and number of steps
	Step  stepData
	Last  bool
	Prop  string

	Width, Height int
	CellW, CellH  int // rect sizes, a little inside the grid
	LogY, TickY   int // top of the cells; the coordinate axis
	Cells         []cellBox
	Bands         []bandBox
	Ticks         []int // x of coordinates 0..n
	Shift         int   // what a label adds to a position (picData.Shift)
	Cons, Start   marker
	Judged        *marker // the coordinate the failure judges σ at, if not the consumer's
	KeysY, SigY   int     // top of the replay and σ rows
	KeyW, BoxH    int
	Keys          []keyBox
	LegendY       int
}

type cellBox struct {
	cellData
	X, Cx    int
	Consumed bool
}

type bandBox struct {
	unitData
	LabelY, Y, H int // caption baseline; band top and height
	X, W         int
	LoX, HiX     int // the edges' guide lines run down to the log
	GuideY       int // where the guides end
	Marks        []markBox
}

type markBox struct {
	readData
	X, LabelY int
	Path      string // a triangle pointing at the position
}

type marker struct {
	X, C int
	Path string
}

type keyBox struct {
	keyData
	X, Cx int
}

// layoutStep places step i of d.
func layoutStep(d *pageData, i int) stepLayout {
	st := d.Steps[i]
	l := stepLayout{N: i, Of: len(d.Steps), Step: st, Last: i == len(d.Steps)-1, Prop: d.Property,
		CellW: cellW - 4, CellH: cellH, KeyW: keyW - 8, BoxH: boxH}
	p := st.Pic
	if p == nil {
		return l
	}
	l.Shift = p.Shift
	n := 0 // the log's last position
	for _, c := range p.Cells {
		n = max(n, c.Pos)
	}
	y, right := 8, bx(n)
	for _, u := range p.Units {
		b := bandBox{unitData: u, LabelY: y + labelH - 4, Y: y + labelH, H: bandH}
		lo, hi := min(u.Lo, n), min(u.Hi, n)
		b.LoX, b.HiX = bx(lo), bx(hi)
		switch {
		case u.HiOpen: // runs past the log's end: the high edge is still to come
			b.HiX = bx(max(n, lo)) + cellW/2
			b.X, b.W = b.LoX, b.HiX-b.LoX
		case hi == lo: // a point bracket
			b.X, b.W = b.LoX-3, 6
		default:
			b.X, b.W = b.LoX, b.HiX-b.LoX
		}
		right = max(right, b.HiX)
		placed := map[int]int{} // reads already at a position
		rows := 0
		for _, r := range u.Reads {
			at := min(r.At, n)
			row := placed[at]
			placed[at]++
			rows = max(rows, row+1)
			x, tip := bx(at), b.Y+bandH
			b.Marks = append(b.Marks, markBox{readData: r, X: x, LabelY: tip + readH*(row+1) + 1,
				Path: fmt.Sprintf("M%d %d l-6 -9 h12 z", x, tip+2)})
		}
		y = b.Y + bandH + readH*rows + laneGp
		l.Bands = append(l.Bands, b)
	}
	l.LogY = y + 10
	for i := range l.Bands {
		l.Bands[i].GuideY = l.LogY
	}
	for _, c := range p.Cells {
		x := bx(c.Pos - 1)
		l.Cells = append(l.Cells, cellBox{cellData: c, X: x + 2, Cx: x + cellW/2, Consumed: c.Pos <= p.Consumed})
	}
	for c := 0; c <= n; c++ {
		l.Ticks = append(l.Ticks, bx(c))
	}
	l.TickY = l.LogY + cellH + 3
	ty := l.TickY + 20 // below the coordinate numbers
	cons, start := min(p.Consumed, n), min(p.Start, n)
	l.Cons = marker{X: bx(cons), C: p.Consumed, Path: fmt.Sprintf("M%d %d l-7 12 h14 z", bx(cons), ty)}
	l.Start = marker{X: bx(start), C: p.Start, Path: fmt.Sprintf("M%d %d l-5 9 h10 z", bx(start), ty+18)}
	l.KeysY = ty + 44
	for _, k := range p.Keys {
		if k.Wrong && k.At != p.Consumed {
			x := bx(min(k.At, n))
			l.Judged = &marker{X: x, C: k.At, Path: fmt.Sprintf("M%d %d l-6 10 h12 z", x, ty+36)}
			l.KeysY += 18
			break
		}
	}
	l.SigY = l.KeysY + boxH + 6
	for j, k := range p.Keys {
		x := padL + j*keyW
		l.Keys = append(l.Keys, keyBox{keyData: k, X: x, Cx: x + (keyW-8)/2})
	}
	l.LegendY = l.SigY + boxH + 30
	l.Width = max(right, padL+len(p.Keys)*keyW, 820) + padR
	l.Height = l.LegendY + 12
	return l
}
