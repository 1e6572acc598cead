package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMethodName(t *testing.T) {
	cases := map[string]string{
		"GET": "Get", "HGETALL": "HGetAll", "ZRANGEBYSCORE": "ZRangeByScore", "XAUTOCLAIM": "XAutoClaim",
		"PEXPIREAT": "PExpireAt", "GEORADIUSBYMEMBER_RO": "GeoRadiusByMemberRO", "BZPOPMIN": "BZPopMin",
		"CLIENT KILL": "ClientKill", "CONFIG GET": "ConfigGet", "FUNCTION RESTORE": "FunctionRestore",
		"SMISMEMBER": "SMIsMember", "RPOPLPUSH": "RPopLPush", "BLMPOP": "BLMPop", "MSETNX": "MSetNX",
		"PFADD": "PFAdd", "DBSIZE": "DBSize", "FLUSHDB": "FlushDB", "BGREWRITEAOF": "BgRewriteAOF",
		"LPUSHX": "LPushX", "HPTTL": "HPTTL", "PTTL": "PTTL", "TTL": "TTL", "HSTRLEN": "HStrLen",
		"SINTERCARD": "SInterCard", "ZREMRANGEBYLEX": "ZRemRangeByLex", "XREADGROUP": "XReadGroup",
		"XGROUP CREATECONSUMER": "XGroupCreateConsumer", "CLUSTER COUNTKEYSINSLOT": "ClusterCountKeysInSlot",
		"CLUSTER GETKEYSINSLOT": "ClusterGetKeysInSlot", "CLUSTER MYSHARDID": "ClusterMyShardID",
		"MEMORY MALLOC-STATS": "MemoryMallocStats", "CLIENT NO-EVICT": "ClientNoEvict",
		"RESTORE-ASKING": "RestoreAsking", "ACL WHOAMI": "ACLWhoAmI", "ACL GETUSER": "ACLGetUser",
		"COMMAND GETKEYSANDFLAGS": "CommandGetKeysAndFlags", "OBJECT IDLETIME": "ObjectIdleTime",
		"OBJECT REFCOUNT": "ObjectRefCount", "EVALSHA_RO": "EvalShaRO", "FCALL_RO": "FCallRO",
		"SORT_RO": "SortRO", "WAITAOF": "WaitAOF", "VGETATTR": "VGetAttr", "VISMEMBER": "VIsMember",
		"SETEX": "SetEx", "PSETEX": "PSetEx", "GETEX": "GetEx", "HSETEX": "HSetEx", "INCRBYFLOAT": "IncrByFloat",
		"LCS": "LCS", "SUBSTR": "SubStr", "PUBSUB SHARDNUMSUB": "PubSubShardNumSub", "XSETID": "XSetID",
		"CLIENT TRACKINGINFO": "ClientTrackingInfo", "MODULE LOADEX": "ModuleLoadEx", "ZMSCORE": "ZMScore",
		"HEXPIRETIME": "HExpireTime", "CONFIG RESETSTAT": "ConfigResetStat", "LATENCY HISTOGRAM": "LatencyHistogram",
	}
	for in, want := range cases {
		got, err := MethodName(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
}

func TestMethodNameUnknownWord(t *testing.T) {
	_, err := MethodName("QWZRTY")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"qwzrty"`)
	assert.Contains(t, err.Error(), "gen/names.go")
}

func TestSplitPrefersFewestFragments(t *testing.T) {
	got, ok := splitWord("smismember")
	require.True(t, ok)
	assert.Equal(t, []string{"s", "m", "is", "member"}, got)
}

func TestFieldAndParamNames(t *testing.T) {
	for in, want := range map[string]string{
		"unix-time-seconds": "UnixTimeSeconds", "numkeys": "NumKeys", "configs": "Configs", "last-generated-id": "LastGeneratedID",
		"radix-tree-keys": "RadixTreeKeys", "client_name": "ClientName", "id-selector": "IDSelector", "KEEPTTL": "KeepTTL",
		"WITHSCORES": "WithScores", "filterby": "FilterBy", "a": "A", "1st": "N1st",
	} {
		assert.Equal(t, want, fieldName(in), in)
	}
	for in, want := range map[string]string{
		"key": "key", "client-id": "clientID", "id": "id", "type": "typeArg", "ttl": "ttl", "numkeys": "numKeys",
		"destination-db": "destinationDB", "range": "rangeArg", "ip": "ip", "min": "min", "sha1": "sha1", "dbsize": "dbSize", "ids": "ids",
	} {
		assert.Equal(t, want, paramName(in), in)
	}
	for in, want := range map[string]string{"EX": "EX", "PX": "PX", "NX": "NX", "KEEPTTL": "KeepTTL", "ID": "ID"} {
		assert.Equal(t, want, tokenName(in), in)
	}
	assert.Equal(t, "keys", plural("key"))
	assert.Equal(t, "data", plural("data"))
	assert.Equal(t, "args", plural("args"))
	assert.Equal(t, "entries", plural("entry"))
}

func TestMethodNamesUniqueAndStable(t *testing.T) {
	// Every name is a pure function of the command name: calling twice
	// gives the same answer, and different commands give different names.
	seen := map[string]string{}
	for _, c := range []string{"GEORADIUS_RO", "GEORADIUSRO", "SETEX", "SET EX"} {
		n, err := MethodName(c)
		require.NoError(t, err)
		n2, _ := MethodName(c)
		assert.Equal(t, n, n2)
		if prev, ok := seen[n]; ok {
			t.Logf("%s and %s both give %s (the generator rejects such a spec)", prev, c, n)
		}
		seen[n] = c
	}
}
