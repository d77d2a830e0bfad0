package explore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cutcheck/cutcheck/explore"
)

// buffer is a bounded buffer of capacity 2 whose producer checks the bound
// wrongly: it may put while the buffer holds 2 items.
type buffer struct{}

type putTake int

const (
	put putTake = iota
	take
)

func (buffer) Init() []int { return []int{0} }

func (buffer) Actions(items *int, buf []putTake) []putTake {
	if *items <= 2 { // the bug: should be items < 2
		buf = append(buf, put)
	}
	if *items > 0 {
		buf = append(buf, take)
	}
	return buf
}

func (buffer) Next(items *int, a putTake, next *int) bool {
	if a == put {
		*next = *items + 1
	} else {
		*next = *items - 1
	}
	return true
}

func (buffer) Encode(items *int, buf []byte) []byte { return append(buf, byte(*items)) }

func (buffer) Decode(b []byte, items *int) error {
	if len(b) != 1 {
		return errors.New("buffer: bad encoding")
	}
	*items = int(b[0])
	return nil
}

func (buffer) Properties() []explore.Property[int, putTake] {
	return []explore.Property[int, putTake]{{
		Name: "within-capacity", Cite: "capacity 2", Kind: explore.Always,
		Check: func(items *int) string {
			if *items > 2 {
				return fmt.Sprintf("%d items in a buffer of 2", *items)
			}
			return ""
		},
	}}
}

func (buffer) Describe(items *int, a putTake) string {
	if a == put {
		return "put an item"
	}
	return "take an item"
}

func (buffer) ActionNames() []string    { return []string{"put", "take"} }
func (buffer) ActionKind(a putTake) int { return int(a) }
func (buffer) Fields(items *int) []explore.Field {
	return []explore.Field{{Name: "items", Value: fmt.Sprint(*items)}}
}

func Example() {
	m := buffer{}
	res, err := explore.Run(context.Background(), explore.Model[int, putTake](m), explore.Options{})
	if err != nil {
		panic(err)
	}
	rep := explore.NewReport(m, res)
	fmt.Println("verdict:", rep.Verdict)
	fmt.Print(rep.Violation.Text(false))
	// Output:
	// verdict: violated
	// step 0: initial state
	//   items: 0
	// step 1: put an item
	//   items: 0 → 1
	// step 2: put an item
	//   items: 1 → 2
	// step 3: put an item
	//   items: 2 → 3
	// violated: within-capacity (always, capacity 2)
	//   3 items in a buffer of 2
}
