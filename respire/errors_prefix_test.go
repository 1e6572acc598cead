package respire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportedErrors maps the name of every exported Err* variable of the
// package (and Nil) to its value. TestExportedErrorsNamePackage fails when
// the package declares one this map lacks.
var exportedErrors = map[string]error{
	"Nil":                   Nil,
	"ErrBatchDone":          ErrBatchDone,
	"ErrCacheDisabled":      ErrCacheDisabled,
	"ErrClosed":             ErrClosed,
	"ErrCredentials":        ErrCredentials,
	"ErrCrossSlot":          ErrCrossSlot,
	"ErrFailover":           ErrFailover,
	"ErrInvalidOption":      ErrInvalidOption,
	"ErrPrimarySwitched":    ErrPrimarySwitched,
	"ErrNoPrimary":          ErrNoPrimary,
	"ErrInterceptorMisuse":  ErrInterceptorMisuse,
	"ErrNoReplica":          ErrNoReplica,
	"ErrNotExecuted":        ErrNotExecuted,
	"ErrNotSent":            ErrNotSent,
	"ErrPoolExhausted":      ErrPoolExhausted,
	"ErrProtocol":           ErrProtocol,
	"ErrSlotUnserved":       ErrSlotUnserved,
	"ErrNodeStalled":        ErrNodeStalled,
	"ErrStalled":            ErrStalled,
	"ErrSubscriptionClosed": ErrSubscriptionClosed,
	"ErrUnavailable":        ErrUnavailable,
	"ErrUnsupported":        ErrUnsupported,
	"ErrWrongNode":          ErrWrongNode,
	"ErrWrongRole":          ErrWrongRole,
}

// TestExportedErrorsNamePackage: every exported Err* value of the package
// (found in its source, so a new one cannot be missed) reads
// "respire: ...", with the package named once.
func TestExportedErrorsNamePackage(t *testing.T) {
	names := declaredErrors(t)
	require.NotEmpty(t, names)
	for _, name := range names {
		err, ok := exportedErrors[name]
		if !assert.True(t, ok, "%s is declared but missing from exportedErrors: add it", name) {
			continue
		}
		msg := err.Error()
		assert.True(t, strings.HasPrefix(msg, "respire: "), "%s = %q does not start with \"respire: \"", name, msg)
		assert.Equal(t, 1, strings.Count(msg, "respire:"), "%s = %q must name the package once", name, msg)
	}
	for name := range exportedErrors {
		assert.Contains(t, names, name, "exportedErrors lists %s, which the package no longer declares", name)
	}
}

// declaredErrors returns the names of the exported package-level variables
// named Err* (and Nil) in the package's non-test files.
func declaredErrors(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name == "Nil" || (strings.HasPrefix(n.Name, "Err") && n.IsExported()) {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}
