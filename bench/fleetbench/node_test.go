package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A reply of Redis 7.0's INFO all, captured as the server sent it (CRLF
// line ends), after one PING, one SET and one CLIENT TRACKING.
func TestParseInfoOfACapturedReply(t *testing.T) {
	text, err := os.ReadFile("testdata/info-redis-7.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshotOf("127.0.0.1:6399", time.Unix(0, 0), ParseInfo(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{CPU: 0.021341 + 0.025609, MainCPU: 0.021059 + 0.025271, HasMain: true, Commands: 3, NetIn: 102, NetOut: 17, Clients: 1}
	if !near(s.CPU, want.CPU) || !near(s.MainCPU, want.MainCPU) || s.HasMain != want.HasMain ||
		s.Commands != want.Commands || s.NetIn != want.NetIn || s.NetOut != want.NetOut || s.Clients != want.Clients {
		t.Errorf("snapshot %+v, want %+v", s, want)
	}
	for cmd, n := range map[string]uint64{"ping": 1, "set": 1, "client|tracking": 1} {
		if s.Calls[cmd] != n {
			t.Errorf("calls of %s: %d, want %d (all: %v)", cmd, s.Calls[cmd], n, s.Calls)
		}
	}
	if len(s.Calls) != 3 {
		t.Errorf("calls %v, want ping, set and client|tracking only", s.Calls)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// Text that is not INFO, or INFO cut short, fails with the fields it
// lacks, and never panics.
func TestParseInfoOfBadText(t *testing.T) {
	for _, text := range []string{
		"",
		"garbage",
		"\x00\xff:\r\n:::\r\ncmdstat_:calls=\r\ncmdstat_get:calls=-1,usec=2\r\ncmdstat_x\r\n",
		"used_cpu_sys:NaN\r\nused_cpu_user:1\r\ntotal_commands_processed:1e300\r\n",
		"used_cpu_sys:1\nused_cpu_user:1\ntotal_commands_processed:5\ntotal_net_input_bytes:1\ntotal_net_output_bytes:1\n", // no connected_clients
	} {
		info := ParseInfo(text)
		if _, err := snapshotOf("x", time.Time{}, info); err == nil {
			t.Errorf("snapshotOf(%q) took it as INFO", text)
		} else if !strings.Contains(err.Error(), "lacks") {
			t.Errorf("snapshotOf(%q): %v, want it to name what is missing", text, err)
		}
		if len(info.Calls) != 0 {
			t.Errorf("ParseInfo(%q) found calls %v", text, info.Calls)
		}
	}
}

// Sub takes what the node did between two snapshots, and refuses
// counters that went backwards.
func TestSnapshotSub(t *testing.T) {
	at := time.Unix(100, 0)
	before := Snapshot{Addr: "n", At: at, CPU: 1, MainCPU: 0.5, HasMain: true, Commands: 10, NetIn: 100, NetOut: 200, Clients: 3,
		Calls: map[string]uint64{"ping": 5, "info": 5}}
	after := Snapshot{Addr: "n", At: at.Add(2 * time.Second), CPU: 1.25, MainCPU: 0.7, HasMain: true, Commands: 30, NetIn: 150, NetOut: 400, Clients: 7,
		Calls: map[string]uint64{"ping": 20, "info": 6, "set": 4}}
	d, err := after.Sub(before)
	if err != nil {
		t.Fatal(err)
	}
	if d.Seconds != 2 || !near(d.CPU, 0.25) || !near(d.MainCPU, 0.2) || d.Commands != 20 || d.NetIn != 50 || d.NetOut != 200 || d.Clients != 7 {
		t.Errorf("delta %+v", d)
	}
	if d.Calls["ping"] != 15 || d.Calls["info"] != 1 || d.Calls["set"] != 4 {
		t.Errorf("calls %v, want ping 15, info 1, set 4", d.Calls)
	}
	if _, err := before.Sub(after); err == nil {
		t.Error("a delta of counters going backwards was taken")
	}
}

func TestClusterNodeAddrs(t *testing.T) {
	text := "07c3 127.0.0.1:30004@40004 master - 0 1 4 connected 0-5460\n" +
		"67ed 127.0.0.1:30002@40002,host master - 0 1 2 connected 5461-10922\n" +
		"292f 127.0.0.1:30003@40003 myself,master - 0 0 3 connected 10923-16383\n" +
		"6ec2 127.0.0.1:30005@40005 master,fail - 0 1 5 disconnected\n" +
		"short line\n"
	got := strings.Join(clusterNodeAddrs(text), ",")
	if want := "127.0.0.1:30002,127.0.0.1:30003,127.0.0.1:30004"; got != want {
		t.Errorf("nodes %s, want %s", got, want)
	}
}
