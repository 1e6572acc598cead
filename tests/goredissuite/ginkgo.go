package goredissuite

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// result is what a ginkgo run reported.
type result struct {
	ran, passed, failed, flaked, skipped int
	failures                             []string // "[FAIL] ..." lines of the summary, spec text only
}

func (r result) String() string {
	return fmt.Sprintf("ran %d: %d passed (%d of them when retried), %d failed, %d skipped", r.ran, r.passed, r.flaked, r.failed, r.skipped)
}

var (
	ranLine    = regexp.MustCompile(`Ran (\d+) of \d+ Specs`)
	countsLine = regexp.MustCompile(`(\d+) Passed \| (\d+) Failed \| (?:(\d+) Flaked \| )?\d+ Pending \| (\d+) Skipped`)
	failLine   = regexp.MustCompile(`^\s*\[(?:FAIL|PANICKED!|TIMEDOUT|INTERRUPTED)\] (.*)$`)
	labels     = regexp.MustCompile(` \[[^\]]*\]$`)
)

// parseGinkgo reads a ginkgo run's output (-ginkgo.no-color).
func parseGinkgo(out []byte) (result, error) {
	var r result
	m := ranLine.FindSubmatch(out)
	c := countsLine.FindSubmatch(out)
	if m == nil || c == nil {
		return r, fmt.Errorf("no ginkgo summary in the output")
	}
	r.ran, _ = strconv.Atoi(string(m[1]))
	r.passed, _ = strconv.Atoi(string(c[1]))
	r.failed, _ = strconv.Atoi(string(c[2]))
	r.flaked, _ = strconv.Atoi(string(c[3])) // passed when retried (-ginkgo.flake-attempts)
	r.skipped, _ = strconv.Atoi(string(c[4]))
	summary := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Summarizing ") {
			summary = true
			continue
		}
		if f := failLine.FindStringSubmatch(line); summary && f != nil {
			r.failures = append(r.failures, specName(f[1]))
		}
	}
	sort.Strings(r.failures)
	return r, nil
}

// specName is a failure's spec text without its node kind and labels:
// "Commands server [It] should X [label]" -> "Commands server should X".
func specName(s string) string {
	for _, kind := range []string{"[It] ", "[BeforeEach] ", "[AfterEach] ", "[JustBeforeEach] ", "[DeferCleanup (Each)] "} {
		s = strings.Replace(s, kind, "", 1)
	}
	for labels.MatchString(s) {
		s = labels.ReplaceAllString(s, "")
	}
	return s
}
