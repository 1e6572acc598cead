package respire

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// semver is the form of a tag: vMAJOR.MINOR.PATCH with an optional
// pre-release.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// TestVersionMatchesChangelog checks Version against the newest "## "
// heading of CHANGELOG.md: "## Unreleased" wants a "-dev" Version, a heading
// that starts with a version ("## v0.1.0 - 2026-12-01") wants exactly that
// version.
func TestVersionMatchesChangelog(t *testing.T) {
	if !semver.MatchString(Version) {
		t.Fatalf("Version %q is not vMAJOR.MINOR.PATCH[-pre]", Version)
	}
	f, err := os.Open("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	heading := ""
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), "## "); ok {
			heading = strings.TrimSpace(h)
			break
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	switch first, _, _ := strings.Cut(heading, " "); {
	case heading == "":
		t.Fatal(`CHANGELOG.md has no "## " heading`)
	case first == "Unreleased":
		if !strings.HasSuffix(Version, "-dev") {
			t.Errorf("CHANGELOG.md's newest section is Unreleased, so Version %q should end in -dev", Version)
		}
	case semver.MatchString(first):
		if first != Version {
			t.Errorf("CHANGELOG.md's newest section is %s but Version is %s", first, Version)
		}
	default:
		t.Errorf("CHANGELOG.md's newest heading %q is neither Unreleased nor a version", heading)
	}
}
