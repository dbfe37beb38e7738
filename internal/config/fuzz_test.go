package config

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary files to the configuration parser. It must
// never panic; an error is an *Error naming the file; a configuration it
// accepts is valid and survives Format and Parse unchanged, and Format of
// it is a fixed point.
func FuzzParse(f *testing.F) {
	sample, err := os.ReadFile("testdata/sample.conf")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(sample),
		"",
		"bridge b0 { }\n",
		"bridge b0 {\n port eth1 -learning -discover blocknonip -promisc stack\n static 02:00:00:00:00:01 eth1 vlan 4094\n}\n",
		"bridge b0 { local; timeout 0; maxaddr 1; port t0; span eth3 }\ntrunk t0 { proto loadbalance; hash l4,l2; port eth1 priority 3 }\n",
		"trunk t0 {\n proto lacp\n lacp-mode passive\n lacp-timeout fast\n lacp-key 65535\n lacp-system-priority 0\n}\n",
		"trunk t0 {\n tx-queue-bytes off\n tx-queue-delay 5\n tx-queue-target 4999\n tx-queue-super-frames on\n send-buffer 1048576\n}\n",
		"bridge b0 {\n bridge b1 { }\n}\n",
		"bridge b0 {\n port eth1\n port eth1\n}\n",
		"}\n{\n",
		"bridge\x00 b0 {}",
		"lb web {\n iface eth1\n vip 192.0.2.100\n vip 2001:db8::1\n method hash\n health tcp:80 interval 3s rise 1\n source 192.0.2.1\n backend 192.0.2.11 weight 3 drain\n}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := Parse(bytes.NewReader(text), "fuzz.conf")
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "fuzz.conf" || !strings.HasPrefix(err.Error(), "fuzz.conf") {
				t.Fatalf("Parse error %q (%T): expected an *Error naming fuzz.conf", err, err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a configuration that Validate refuses: %v\n%s", err, text)
		}
		formatted := c.Format()
		again, err := Parse(bytes.NewReader(formatted), "formatted.conf")
		if err != nil {
			t.Fatalf("Parse(Format(c)): expected no error, got %v\n%s", err, formatted)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("Parse(Format(c)):\nexpected %+v\ngot      %+v", c, again)
		}
		if f2 := again.Format(); !bytes.Equal(f2, formatted) {
			t.Fatalf("Format(Parse(Format(c))) differs:\nexpected\n%s\ngot\n%s", formatted, f2)
		}
	})
}
