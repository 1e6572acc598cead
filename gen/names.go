package gen

import (
	"fmt"
	"strings"
	"unicode"
)

// Redis spells most commands as run-together lowercase words ("zrangebyscore",
// "xautoclaim", "georadiusbymember_ro"). Go names need the word boundaries
// back. splitWord finds them with the fragment table below: it splits a word
// into the fewest fragments of the table (ties go to the split whose first
// fragment is longest), and each fragment has a fixed Go spelling.
//
// A word the table cannot split is an error, so that a new server command
// gets a deliberate name instead of a guessed one: add its fragments here
// and a case to TestMethodName.

// fragments maps each known fragment to its Go spelling. One-letter
// fragments are the type prefixes of Redis (H hash, Z sorted set, X stream,
// L/R list ends, B blocking, M multi, P milliseconds or pattern, S set or
// shard, V vector set, F function).
var fragments = map[string]string{
	// prefixes
	"b": "B", "f": "F", "h": "H", "l": "L", "m": "M", "p": "P", "r": "R",
	"s": "S", "v": "V", "x": "X", "z": "Z",
	"pf": "PF", "geo": "Geo", "bg": "Bg", "un": "Un",
	// initialisms and fixed spellings
	"id": "ID", "ids": "IDs", "ttl": "TTL", "acl": "ACL", "aof": "AOF", "ro": "RO",
	"nx": "NX", "xx": "XX", "lcs": "LCS", "db": "DB", "ip": "IP", "tls": "TLS",
	"url": "URL", "ok": "OK", "lru": "LRU", "lfu": "LFU", "rdb": "RDB", "sha": "Sha",
	"whoami": "WhoAmI", "lolwut": "Lolwut", "capa": "Capa", "ex": "Ex", "pubsub": "PubSub",
	"sha1": "SHA1", "json": "JSON", "crc": "CRC", "cpu": "CPU", "utc": "UTC",
	"ch": "CH", "gt": "GT", "lt": "LT", "px": "PX", "exat": "EXAT", "pxat": "PXAT",
	"km": "KM", "ft": "FT", "mi": "MI", "fxx": "FXX", "fnx": "FNX", "kv": "KV",
	"abs": "Abs", "absttl": "AbsTTL", "idletime": "IdleTime", "maxlen": "MaxLen",
	"minid": "MinID", "maxage": "MaxAge", "laddr": "LAddr", "addr": "Addr",
	"nomkstream": "NoMkStream", "justid": "JustID", "keepttl": "KeepTTL",
	"withscores": "WithScores", "withscore": "WithScore", "withcoord": "WithCoord",
	"withdist": "WithDist", "withhash": "WithHash", "withvalues": "WithValues",
	"withcode": "WithCode", "withmatchlen": "WithMatchLen", "withattribs": "WithAttribs",
	"libraryname": "LibraryName", "numkeys": "NumKeys", "numfields": "NumFields",
	"numids": "NumIDs", "numreplicas": "NumReplicas", "numlocal": "NumLocal",
	"lonlat": "LonLat", "fromlonlat": "FromLonLat", "frommember": "FromMember",
	"byradius": "ByRadius", "bybox": "ByBox", "bylex": "ByLex", "byscore": "ByScore",
	"skipme": "SkipMe", "noloop": "NoLoop", "bcast": "BCast", "optin": "OptIn",
	"optout": "OptOut", "noevict": "NoEvict", "notouch": "NoTouch", "nosave": "NoSave",
	"noack": "NoAck", "noquantize": "NoQuant", "noquant": "NoQuant", "cas": "CAS",
	"setattr": "SetAttr", "getattr": "GetAttr", "ef": "EF", "fp32": "FP32", "q8": "Q8",
	"bin": "Bin", "lastid": "LastID", "entriesread": "EntriesRead", "keepref": "KeepRef",
	"delref": "DelRef", "acked": "Acked", "fnv": "FNV", "retrycount": "RetryCount", "entriesadded": "EntriesAdded",
	// words
	"ack": "Ack", "add": "Add", "addslots": "AddSlots", "after": "After", "aggregate": "Aggregate",
	"all": "All", "alpha": "Alpha", "am": "Am", "and": "And", "any": "Any", "append": "Append",
	"args": "Args", "asc": "Asc", "asking": "Asking", "async": "Async", "at": "At", "attr": "Attr",
	"auth": "Auth", "auto": "Auto", "before": "Before", "bit": "Bit", "block": "Block",
	"bumped": "Bumped", "bump": "Bump", "by": "By", "caching": "Caching", "call": "Call",
	"card": "Card", "cat": "Cat", "channel": "Channel", "channels": "Channels", "claim": "Claim",
	"client": "Client", "cluster": "Cluster", "command": "Command", "conf": "Conf",
	"config": "Config", "consumer": "Consumer", "consumers": "Consumers", "copy": "Copy",
	"count": "Count", "create": "Create", "data": "Data", "debug": "Debug", "decr": "Decr",
	"del": "Del", "delete": "Delete", "desc": "Desc", "destroy": "Destroy", "diff": "Diff",
	"dim": "Dim", "discard": "Discard", "dist": "Dist", "docs": "Docs", "doctor": "Doctor",
	"dry": "Dry", "dump": "Dump", "echo": "Echo", "emb": "Emb", "encoding": "Encoding",
	"epoch": "Epoch", "eval": "Eval", "evict": "Evict", "exec": "Exec", "exists": "Exists",
	"expire": "Expire", "failover": "Failover", "failure": "Failure", "field": "Field",
	"fields": "Fields", "flags": "Flags", "float": "Float", "flush": "Flush", "flushall": "FlushAll",
	"forget": "Forget", "freq": "Freq", "function": "Function", "gen": "Gen", "get": "Get",
	"getkeys": "GetKeys", "graph": "Graph", "group": "Group", "groups": "Groups", "hash": "Hash",
	"hello": "Hello", "help": "Help", "histogram": "Histogram", "history": "History",
	"idle": "Idle", "import": "Import", "in": "In", "incr": "Incr", "index": "Index",
	"info": "Info", "insert": "Insert", "inter": "Inter", "is": "Is", "keys": "Keys",
	"key": "Key", "kill": "Kill", "last": "Last", "latency": "Latency", "latest": "Latest",
	"len": "Len", "lex": "Lex", "link": "Link", "links": "Links", "list": "List", "load": "Load",
	"loadex": "LoadEx", "log": "Log", "malloc": "Malloc", "max": "Max", "meet": "Meet",
	"member": "Member", "members": "Members", "memory": "Memory", "merge": "Merge",
	"migrate": "Migrate", "min": "Min", "module": "Module", "monitor": "Monitor", "move": "Move",
	"multi": "Multi", "my": "My", "name": "Name", "no": "No", "node": "Node", "nodes": "Nodes",
	"num": "Num", "numpat": "NumPat", "numsub": "NumSub", "object": "Object", "of": "Of",
	"only": "Only", "op": "Op", "pass": "Pass", "pause": "Pause", "pending": "Pending",
	"persist": "Persist", "ping": "Ping", "pop": "Pop", "pos": "Pos", "publish": "Publish",
	"purge": "Purge", "push": "Push", "quit": "Quit", "radius": "Radius", "rand": "Rand",
	"random": "Random", "range": "Range", "rank": "Rank", "read": "Read", "redir": "Redir",
	"ref": "Ref", "refcount": "RefCount", "rem": "Rem", "rename": "Rename", "repl": "Repl",
	"replica": "Replica", "replicas": "Replicas", "replicate": "Replicate", "reply": "Reply",
	"reports": "Reports", "reset": "Reset", "restore": "Restore", "rev": "Rev",
	"rewrite": "Rewrite", "role": "Role", "run": "Run", "save": "Save", "scan": "Scan",
	"score": "Score", "script": "Script", "search": "Search", "select": "Select", "self": "Self",
	"set": "Set", "shard": "Shard", "shards": "Shards", "shutdown": "Shutdown", "sim": "Sim",
	"slave": "Slave", "slaves": "Slaves", "slot": "Slot", "slots": "Slots", "slow": "Slow",
	"slowlog": "SlowLog", "sort": "Sort", "source": "Source", "stat": "Stat", "stats": "Stats",
	"store": "Store", "str": "Str", "stream": "Stream", "sub": "Sub", "subscribe": "Subscribe",
	"swap": "Swap", "sync": "Sync", "test": "Test", "time": "Time", "touch": "Touch",
	"tracking": "Tracking", "trim": "Trim", "type": "Type", "unblock": "Unblock",
	"union": "Union", "unlink": "Unlink", "unload": "Unload", "unpause": "Unpause",
	"unsubscribe": "Unsubscribe", "unwatch": "Unwatch", "usage": "Usage", "user": "User",
	"users": "Users", "vals": "Vals", "wait": "Wait", "watch": "Watch", "write": "Write",
	"with": "With", "who": "Who", "value": "Value", "values": "Values",
	"score-member": "ScoreMember", "element": "Element", "elements": "Elements",
	"format": "Format", "old": "Old", "new": "New", "filter": "Filter", "mode": "Mode",
	"seconds": "Seconds", "milliseconds": "Milliseconds", "unix": "Unix", "timeout": "Timeout",
	"offset": "Offset", "start": "Start", "end": "End", "stop": "Stop", "pattern": "Pattern",
	"match": "Match", "limit": "Limit", "pivot": "Pivot", "where": "Where", "from": "From",
	"to": "To", "source-key": "SourceKey", "destination": "Destination", "dest": "Dest",
	"increment": "Increment", "decrement": "Decrement", "message": "Message",
	"password": "Password", "username": "Username", "host": "Host", "port": "Port",
	"options": "Options", "option": "Option", "parameter": "Parameter", "weights": "Weights",
	"weight": "Weight", "sum": "Sum", "longitude": "Longitude", "latitude": "Latitude",
	"width": "Width", "height": "Height", "unit": "Unit", "script-name": "ScriptName",
	"sha-1": "SHA1", "library": "Library", "code": "Code", "policy": "Policy",
	"replace": "Replace", "encode": "Encode", "overflow": "Overflow", "wrap": "Wrap",
	"sat": "Sat", "fail": "Fail", "not": "Not", "or": "Or", "xor": "XOr", "one": "One",
	"diff1": "Diff1", "andor": "AndOr", "first": "First", "next": "Next", "rule": "Rule",
	"rules": "Rules", "reason": "Reason", "section": "Section", "lazy": "Lazy", "quantile": "Quantile",
	"left": "Left", "right": "Right", "up": "Up", "down": "Down", "sample": "Sample",
	"samples": "Samples", "events": "Events", "event": "Event", "version": "Version", "db0": "DB0",
	"skip": "Skip", "master": "Master", "normal": "Normal", "primary": "Primary",
	"connection": "Connection", "lib": "Lib", "ver": "Ver", "on": "On", "off": "Off",
	"yes": "Yes", "prefix": "Prefix", "redirect": "Redirect", "server": "Server",
	"total": "Total", "entry": "Entry", "entries": "Entries", "deleted": "Deleted",
	"radix": "Radix", "tree": "Tree", "generated": "Generated", "recorded": "Recorded",
	"lag": "Lag", "delivered": "Delivered", "inactive": "Inactive", "full": "Full",
	"direction": "Direction", "events-in": "EventsIn", "send": "Send", "buffer": "Buffer",
	"allocated": "Allocated", "used": "Used", "health": "Health", "endpoint": "Endpoint",
	"hostname": "Hostname", "replication": "Replication", "matches": "Matches",
	"prefixes": "Prefixes", "epsilon": "Epsilon", "explore": "Explore", "truth": "Truth",
	"attribs": "Attribs", "reduce": "Reduce", "quant": "Quant", "vector": "Vector",
	"vectors": "Vectors", "values-list": "ValuesList", "filterefficiency": "FilterEfficiency",
	"ef-runtime": "EFRuntime", "ele": "Ele", "nothreads": "NoThread", "threads": "Threads",
	"raw": "Raw", "m1": "M1", "size": "Size", "level": "Level", "levels": "Levels",
	"dims": "Dims", "local": "Local", "remote": "Remote", "consumer-name": "ConsumerName",
	"categories": "Categories", "category": "Category", "bits": "Bits", "sequence": "Sequence",
	"force": "Force", "takeover": "Takeover", "hard": "Hard", "soft": "Soft", "node-id": "NodeID",
	"importing": "Importing", "migrating": "Migrating", "stable": "Stable", "ms": "Ms",
	"mkstream": "MkStream", "now": "Now", "abort": "Abort", "dryrun": "DryRun",
	"lagging": "Lagging", "repl-offset": "ReplOffset", "offset-in": "OffsetIn", "idx": "Idx",
	"minmatchlen": "MinMatchLen", "rank-and": "RankAnd", "withttl": "WithTTL",
	"channel-name": "ChannelName", "cursor": "Cursor", "items": "Items", "item": "Item",
	"ttls": "TTLs", "expires": "Expires", "persisted": "Persisted", "flag": "Flag",
	"dict": "Dict", "kvstore": "KVStore", "keyspace": "Keyspace", "expired": "Expired",
	"deny": "Deny", "allow": "Allow", "busy": "Busy", "internal": "Internal", "obj": "Obj",
	"inline": "Inline", "err": "Err", "error": "Error", "ops": "Ops", "sec": "Sec", "ps": "PS",
	"per": "Per", "fast": "Fast", "large": "Large", "ranks": "Ranks", "iteration": "Iteration",
	"nocontent": "NoContent", "selector": "Selector", "ifeq": "IfEq", "src": "Src", "dst": "Dst", "show": "Show", "enabled": "Enabled", "disabled": "Disabled", "store-dist": "StoreDist", "storedist": "StoreDist",
	"hotkeys": "Hotkeys", "cfg": "Cfg", "idmp": "IDMP", "record": "Record", "ifne": "IfNe",
	"ifdeq": "IfDEq", "ifdne": "IfDNe", "digest": "Digest", "ifeq-value": "IfEqValue",
	"migration": "Migration", "migrations": "Migrations",
	"delifeq":     "DelIfEq",
	"clusterscan": "ClusterScan", "cancel": "Cancel", "delex": "DelEx", "msetex": "MSetEx",
}

// wholeOnly are fragments that name a whole token (GEO units, EX/PX
// variants) but must not be found inside longer words: "smismember" is
// S+M+Is+Member, not S+MI+S+Member.
var wholeOnly = map[string]bool{
	"mi": true, "km": true, "ft": true, "gt": true, "lt": true, "ch": true, "px": true, "exat": true,
	"pxat": true, "xx": true, "fxx": true, "fnx": true, "ms": true, "ps": true, "ef": true, "q8": true,
	"m1": true, "kv": true, "up": true,
}

// splitWord splits one lowercase word (no spaces, dashes or underscores) into
// fragments, or reports false.
func splitWord(w string) ([]string, bool) { return splitWordMin(w, 1) }

// splitWordMin is splitWord using only fragments of at least min letters.
func splitWordMin(w string, min int) ([]string, bool) {
	n := len(w)
	// best[i] is the fewest fragments that cover w[i:], -1 if impossible;
	// next[i] is the end of the first fragment of that split.
	best := make([]int, n+1)
	next := make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		best[i] = -1
		for j := n; j > i; j-- { // longest first: ties keep the longest fragment
			if _, ok := fragments[w[i:j]]; !ok || wholeOnly[w[i:j]] || best[j] < 0 || j-i < min {
				continue
			}
			if c := best[j] + 1; best[i] < 0 || c < best[i] {
				best[i], next[i] = c, j
			}
		}
	}
	if best[0] < 0 {
		return nil, false
	}
	var out []string
	for i := 0; i < n; i = next[i] {
		out = append(out, w[i:next[i]])
	}
	return out, true
}

// camel converts a Redis name ("zrangebyscore", "CLIENT KILL",
// "georadiusbymember_ro", "no-evict", "unix-time-seconds") to an exported Go
// identifier. Parts made of digits and unknown words are kept as they are,
// capitalized; strict reports such parts as an error instead.
//
// Outside method names (strict false), run-together words are split only
// into fragments of two letters or more, so that "configs" stays "Configs"
// rather than "ConfigS".
func camel(name string, strict bool) (string, error) {
	var b strings.Builder
	parts := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, p := range parts {
		if g, ok := fragments[p]; ok {
			b.WriteString(g)
			continue
		}
		minLen := 1
		if !strict {
			minLen = 2
		}
		if frags, ok := splitWordMin(p, minLen); ok {
			for _, f := range frags {
				b.WriteString(fragments[f])
			}
			continue
		}
		if strict {
			return "", fmt.Errorf("cannot split %q of %q into known words: add its fragments to gen/names.go", p, name)
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	s := b.String()
	if s == "" {
		return "", fmt.Errorf("no Go name for %q", name)
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "N" + s
	}
	return s, nil
}

// MethodName returns the Go method name of a command or subcommand
// ("HGETALL" -> "HGetAll", "CLIENT KILL" -> "ClientKill").
func MethodName(command string) (string, error) { return camel(command, true) }

// fieldName is the exported Go name of an argument, token or reply field;
// unknown words are capitalized as they are.
func fieldName(name string) string {
	s, err := camel(name, false)
	if err != nil {
		return "X"
	}
	return s
}

// tokenName is the Go name of a field named by its token: short tokens
// stay upper case (EX, PX, NX, CH, ID).
func tokenName(tok string) string {
	if len(tok) <= 2 {
		return strings.ToUpper(tok)
	}
	return fieldName(tok)
}

// goKeywords and predeclared names that would shadow something needed in
// generated method bodies.
var reservedParams = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true,
	"range": true, "return": true, "select": true, "struct": true, "switch": true, "type": true,
	"var": true, "ctx": true, "opts": true, "c": true, "b": true, "x": true, "v": true,
	"err": true, "len": true, "string": true, "int64": true, "float64": true, "time": true,
	"context": true, "nil": true, "true": true, "false": true, "error": true,
	"any": true, "bool": true, "int": true, "resp": true, "o": true, "e": true, "i": true,
}

// paramName is the unexported Go name of a parameter.
func paramName(name string) string {
	s := lowerFirst(fieldName(name))
	if reservedParams[s] {
		s += "Arg"
	}
	return s
}

// lowerFirst lowers the leading word of an exported name: "ID" -> "id",
// "TTL" -> "ttl", "SHA1" -> "sha1", "NumKeys" -> "numKeys", "IDs" -> "ids",
// "DBSize" -> "dbSize".
func lowerFirst(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && (unicode.IsUpper(r[i]) || unicode.IsDigit(r[i]) && i > 0) {
		i++
	}
	switch {
	case i == len(r):
		return strings.ToLower(s)
	case r[i] == 's' && i+1 == len(r):
		return strings.ToLower(s)
	case i > 1 && unicode.IsLower(r[i]):
		i--
	}
	return strings.ToLower(string(r[:i])) + string(r[i:])
}

// plural names the Go parameter of a repeated argument.
func plural(name string) string {
	switch {
	case strings.HasSuffix(name, "s"), strings.HasSuffix(name, "data"), strings.HasSuffix(name, "Data"):
		return name
	case strings.HasSuffix(name, "y") && !strings.HasSuffix(name, "ey"):
		return name[:len(name)-1] + "ies"
	}
	return name + "s"
}
