package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen/spec"
)

// A choice of EX seconds and PX milliseconds sends a duration that is not
// whole seconds as PX: the seconds branch learns its sibling's token. A
// duration in seconds without such a sibling is rounded up, unless a twin
// command takes it in milliseconds (EXPIRE and PEXPIRE, TestMillisTwins).
func TestSecondsBesidePX(t *testing.T) {
	set := &spec.Command{Name: "SET", Arguments: []spec.Argument{
		{Name: "key", Type: "key"},
		{Name: "value", Type: "string"},
		{Name: "expiration", Type: "oneof", Optional: true, Arguments: []spec.Argument{
			{Name: "seconds", Type: "integer", Token: "EX"},
			{Name: "milliseconds", Type: "integer", Token: "PX"},
			{Name: "unix-time-seconds", Type: "unix-time", Token: "EXAT"},
		}},
	}}
	args := buildArgs(set)
	exp := args[2].Children
	require.Len(t, exp, 3)
	assert.Equal(t, scSecondsOrMillis, exp[0].scalar)
	assert.Equal(t, "PX", exp[0].millisToken)
	assert.Equal(t, scMillis, exp[1].scalar, "PX stays milliseconds")
	assert.Equal(t, scUnixSeconds, exp[2].scalar)
	assert.True(t, numeric(exp[0].scalar), "its zero is 'not given' like any number's")

	expire := &spec.Command{Name: "EXPIRE", Arguments: []spec.Argument{
		{Name: "key", Type: "key"},
		{Name: "seconds", Type: "integer"},
	}}
	assert.Equal(t, scSecondsOrTwin, buildArgs(expire)[1].scalar, "EXPIRE has no PX, but PEXPIRE is its twin")
	assert.Equal(t, "PEXPIRE", buildArgs(expire)[1].millisToken)
	touch := &spec.Command{Name: "OBJECT FREQ", Arguments: []spec.Argument{{Name: "seconds", Type: "integer"}}}
	assert.Equal(t, scSeconds, buildArgs(touch)[0].scalar, "no twin: rounded up")
}

func TestSupplementUnits(t *testing.T) {
	wait := &spec.Command{Name: "WAIT", Arguments: []spec.Argument{
		{Name: "numreplicas", Type: "integer"},
		{Name: "timeout", Type: "integer"},
		{Name: "age", Type: "integer", Token: "MAXAGE", Optional: true},
		{Name: "name", Type: "string", Token: "NAME", Optional: true},
	}}
	args := buildArgs(wait)
	assert.Equal(t, scInt, args[1].scalar, "the spec does not say the unit: an integer")
	require.NoError(t, applyUnits(args, wait, map[string]string{"timeout": "milliseconds", "MAXAGE": "seconds"}))
	assert.Equal(t, scMillis, args[1].scalar)
	assert.Equal(t, scSeconds, args[2].scalar, "named by its token")
	assert.Equal(t, scInt, args[0].scalar)
	typ, err := (&container{}).valueType(args[1])
	require.NoError(t, err)
	assert.Equal(t, tDuration, typ)

	err = applyUnits(buildArgs(wait), wait, map[string]string{"timeout": "minutes", "NOPE": "seconds", "NAME": "seconds"})
	assert.ErrorContains(t, err, `units: timeout of WAIT: unit "minutes" is not seconds or milliseconds`)
	assert.ErrorContains(t, err, "units: WAIT has no argument NOPE")
	assert.ErrorContains(t, err, "units: NAME of WAIT is a string, not an integer")
}

// The file's units are applied: WAIT's timeout is a time.Duration.
func TestSupplementFileUnits(t *testing.T) {
	sup, err := LoadSupplement("../spec/supplement.json")
	require.NoError(t, err)
	units := map[string]map[string]string{}
	for _, c := range sup.Commands {
		if c.Units != nil {
			units[c.Name] = c.Units
		}
	}
	for _, name := range []string{"WAIT", "WAITAOF", "CLIENT PAUSE", "MIGRATE"} {
		assert.Equal(t, "milliseconds", units[name]["timeout"], name)
	}
}
