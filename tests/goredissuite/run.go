package goredissuite

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// suiteClients are the clients the suites run on: through the adapter
// only (RESPIRE_GOREDIS_SUITE=adapter, CI's choice), its failures checked
// against the lists of specs that fail on go-redis too; or go-redis as well
// (RESPIRE_GOREDIS_SUITE=both), its failures the baseline. Unset, or
// RESPIRE_GOREDIS_SUITE=cluster (go-redis's cluster suite alone, see
// clusterSuiteClients), the test is skipped.
func suiteClients(t *testing.T) []string {
	switch m := os.Getenv("RESPIRE_GOREDIS_SUITE"); m {
	case "":
		t.Skip("set RESPIRE_GOREDIS_SUITE=adapter or both (make goredis-suite) to run the upstream suites; they take minutes")
	case "adapter":
		return []string{"adapter"}
	case "both", "1":
		return []string{"go-redis", "adapter"}
	case "cluster":
		t.Skip("RESPIRE_GOREDIS_SUITE=cluster runs go-redis's cluster suite only")
	default:
		t.Fatalf("RESPIRE_GOREDIS_SUITE=%q: want adapter, both or cluster", m)
	}
	return nil
}

// clusterSuiteClients are the clients go-redis's cluster suite runs on:
// go-redis (the baseline) and the adapter, with RESPIRE_GOREDIS_SUITE=both
// or cluster. It takes minutes more than the other suites, so CI's
// "adapter" leaves it out.
func clusterSuiteClients(t *testing.T) []string {
	switch m := os.Getenv("RESPIRE_GOREDIS_SUITE"); m {
	case "both", "1", "cluster":
		return []string{"go-redis", "adapter"}
	case "", "adapter":
		t.Skip("set RESPIRE_GOREDIS_SUITE=cluster or both (make goredis-suite GOREDIS_SUITE=cluster) to run go-redis's cluster suite; it takes minutes")
	default:
		t.Fatalf("RESPIRE_GOREDIS_SUITE=%q: want adapter, both or cluster", m)
	}
	return nil
}

// runGoTest runs a go test binary (-test.v added) in dir with env added to
// the process's, and runs the top-level tests that failed once more: the
// libraries' tests wait on timers, which a loaded machine can miss. The
// result's failures are those of the second run; its flaky those that
// passed only then.
func runGoTest(bin, dir string, env []string, args ...string) (goTestResult, []byte) {
	run := func(extra ...string) []byte {
		cmd := exec.Command(bin, append(append([]string{"-test.v"}, args...), extra...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		return out
	}
	out := run()
	res := parseGoTest(out, true)
	var top []string
	for _, f := range res.failures {
		if !strings.Contains(f, "/") {
			top = append(top, regexp.QuoteMeta(f))
		}
	}
	if len(top) == 0 {
		return res, out
	}
	again := run("-test.run", "^("+strings.Join(top, "|")+")$")
	res2 := parseGoTest(again, true)
	if res2.passed+res2.failed == 0 {
		return res, append(out, again...)
	}
	failed := res2.failedSet()
	for _, f := range res.failures {
		if !failed[f] {
			res.flaky = append(res.flaky, f)
		}
	}
	res.passed += res.failed - res2.failed
	res.failed, res.failures = res2.failed, res2.failures
	return res, append(out, again...)
}

// The suites run side by side (t.Parallel; make goredis-suite passes
// -parallel 8, so that the three and their runs are not held back by
// go test's default of GOMAXPROCS), but their test binaries are built
// first: a suite's tests start once no suite is building (the upstream
// tests wait on timers, which a build's load can make late).
var builds struct {
	sync.Mutex
	n    int
	done chan struct{} // closed when n drops to 0
}

// building marks a suite as building until the returned func is called,
// which waits for the other suites' builds to end.
func building() (built func()) {
	builds.Lock()
	if builds.n == 0 {
		builds.done = make(chan struct{})
	}
	builds.n++
	builds.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			builds.Lock()
			builds.n--
			done := builds.done
			if builds.n == 0 {
				close(done)
			}
			builds.Unlock()
			<-done
		})
	}
}

// goTestResult counts a go test -v run's tests.
type goTestResult struct {
	passed, failed, skipped int
	failures                []string
	flaky                   []string // failed, then passed when run again
}

func (r goTestResult) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", r.passed, r.failed, r.skipped)
	if len(r.failures) > 0 {
		s += " (" + strings.Join(r.failures, ", ") + ")"
	}
	if len(r.flaky) > 0 {
		s += "; passed when run again: " + strings.Join(r.flaky, ", ")
	}
	return s
}

func (r goTestResult) failedSet() map[string]bool {
	m := map[string]bool{}
	for _, f := range r.failures {
		m[f] = true
	}
	return m
}

var goTestLine = regexp.MustCompile(`(?m)^([ \t]*)--- (PASS|FAIL|SKIP): (\S+)`)

// parseGoTest counts a go test -v run's top-level tests, and their
// subtests too when subtests is set.
func parseGoTest(out []byte, subtests bool) goTestResult {
	var r goTestResult
	for _, m := range goTestLine.FindAllSubmatch(out, -1) {
		if len(m[1]) > 0 && !subtests {
			continue
		}
		m = m[1:]
		switch string(m[1]) {
		case "PASS":
			r.passed++
		case "FAIL":
			r.failed++
			r.failures = append(r.failures, string(m[2]))
		case "SKIP":
			r.skipped++
		}
	}
	sort.Strings(r.failures)
	return r
}
