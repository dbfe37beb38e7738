package lladdr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeJournal feeds arbitrary files to the lladdr journal decoder,
// which reads what a crashed daemon left. It must never panic; entries it
// accepts have a name, given once, and a positive index, and encoding
// them gives a file that decodes to the same encoding.
func FuzzDecodeJournal(f *testing.F) {
	good := `{"interface":"eth1","ifindex":2,"original":"02:00:00:00:00:0a","set":"02:5e:00:00:00:01","owner":"trunk trunk0","time":"2025-01-02T03:04:05.000000006Z"}`
	for _, s := range []string{
		`{"version":1,"entries":[]}`,
		`{"version":1,"entries":[` + good + `]}`,
		`{"version":1,"entries":[` + good + `,{"interface":"eth2","ifindex":3,"original":"00:00:00:00:00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10","set":"02:5e:00:00:00:01","owner":"","time":"0001-01-01T00:00:00Z"}]}`,
		`{"version":1,"entries":[` + good + `,` + good + `]}`,
		`{"version":2,"entries":[]}`,
		`{"version":1,"entries":[]} {}`,
		`{"version":1,"entries":[{"interface":"eth1","ifindex":0}]}`,
		"\x00garbage",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeJournal(b)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for i, e := range entries {
			if e.Interface == "" || seen[e.Index] || e.Index <= 0 {
				t.Fatalf("entry %d %+v: expected a name and a positive index, given once", i, e)
			}
			seen[e.Index] = true
		}
		enc := func(entries []Entry) []byte {
			out, err := json.Marshal(journalDoc{Version: journalVersion, Entries: entries})
			if err != nil {
				t.Fatalf("encode %+v: %v", entries, err)
			}
			return out
		}
		first := enc(entries)
		again, err := decodeJournal(first)
		if err != nil {
			t.Fatalf("decode of an encoded journal: %v\n%s", err, first)
		}
		if second := enc(again); !bytes.Equal(first, second) {
			t.Fatalf("journal changed through encode and decode:\nfirst  %s\nsecond %s", first, second)
		}
	})
}
