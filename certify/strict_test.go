package certify

import (
	"strings"
	"testing"
)

// stringBundle is a one-key bundle over string keys: the scope and the
// chunk are key k; the chunk reads k absent before the log; the log writes
// key e := 1 at p1 and the stream emits key k := 1. With k and e two
// distinct keys this is no virtual cut (k's event is for another key).
func stringBundle(k, e string) []byte {
	return []byte(`{"format":"cutcheck-evidence","version":1,"coordinates":"position","keys":"string","base":"complete","discipline":"window-discard",` +
		`"certificate":{"scope":{"keys":[` + k + `]},"frontier":1},"run":{"scope":{"keys":[` + k + `]},"start":0,"consumed":1},` +
		`"units":[{"domain":{"keys":[` + k + `]},"lo":0,"hi":0}]}` + "\n" +
		`{"read":1,"k":` + k + `,"v":null}` + "\n" +
		`{"p":1,"k":` + e + `,"v":1}` + "\n" +
		`{"out":` + k + `,"v":1,"tag":1}` + "\n")
}

// Finding: keys were decoded with U+FFFD replacement, so two lone
// surrogates (pure-ASCII JSON) or two invalid UTF-8 sequences were one key,
// and an event for one counted for the other: Accept. A key is a Unicode
// string or it is no key: S1.
func TestKeysAreUnicode(t *testing.T) {
	if res := verifyBytes(t, stringBundle(`"d"`, `"d"`), Options{}); res.Verdict != Accept {
		t.Fatalf("the same bundle with one valid key: %s", res.Line())
	}
	for name, b := range map[string][]byte{
		"lone high surrogates":        stringBundle(`"d\udbff"`, `"d\ud800"`),
		"lone low surrogate":          stringBundle(`"d\udc00"`, `"d\udfff"`),
		"high surrogate at the end":   stringBundle(`"d\ud800\u0041"`, `"d\ud801\u0041"`),
		"invalid UTF-8 in an event":   stringBundle(`"d\u0041"`, "\"d\xffA\""),
		"invalid UTF-8 in the header": stringBundle("\"d\xfe\"", "\"d\xfe\""),
		"surrogate in a value":        []byte(strings.Replace(string(stringBundle(`"d"`, `"d"`)), `{"p":1,"k":"d","v":1}`, `{"p":1,"k":"d","v":"\udc00"}`, 1)),
	} {
		t.Run(name, func(t *testing.T) {
			res := verifyBytes(t, b, Options{})
			if res.Verdict != Reject || res.Failure.Obligation != "S1" {
				t.Fatalf("got %s, want an S1 reject", res.Line())
			}
			t.Log(res.Line())
		})
	}
	// A valid surrogate pair is one character, and the same key as its
	// UTF-8 spelling.
	if res := verifyBytes(t, stringBundle(`"d\ud83d\ude00"`, "\"d\U0001F600\""), Options{}); res.Verdict != Accept {
		t.Fatalf("a surrogate pair: %s", res.Line())
	}
}

// Finding: encoding/json keeps the last of two members with one name and
// matches header names without regard to case, so two readers of one
// bundle could disagree. Both are S1, in the header and in records.
func TestMemberNamesAreExact(t *testing.T) {
	good := bundleOf(t, runExample(t, WindowDiscard))
	mustAccept(t, good)
	for name, b := range map[string][]byte{
		"duplicate header member": edit(good, func(l string) string { return strings.Replace(l, `"frontier":5`, `"frontier":5,"frontier":3`, 1) }),
		"case-variant header member": edit(good, func(l string) string {
			return strings.Replace(l, `"frontier":5`, `"Frontier":5`, 1)
		}),
		"case-variant nested member": edit(good, func(l string) string { return strings.Replace(l, `"lo":1`, `"LO":1`, 1) }),
		"duplicate record member": edit(good, func(l string) string {
			return strings.Replace(l, `{"p":3,"k":2,"v":1,"x":3}`, `{"p":3,"k":2,"v":1,"v":2,"x":3}`, 1)
		}),
		"case-variant record member": edit(good, func(l string) string {
			return strings.Replace(l, `{"p":3,"k":2,"v":1,"x":3}`, `{"p":3,"k":2,"K":1,"v":1,"x":3}`, 1)
		}),
	} {
		t.Run(name, func(t *testing.T) {
			if string(b) == string(good) {
				t.Fatal("the edit changed nothing")
			}
			res := verifyBytes(t, b, Options{})
			if res.Verdict != Reject || res.Failure.Obligation != "S1" {
				t.Fatalf("got %s, want an S1 reject", res.Line())
			}
			t.Log(res.Line())
		})
	}
}
