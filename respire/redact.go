package respire

import (
	"errors"
	"strings"
)

// Credentials in rendered commands.
//
// Every place where the client turns a command back into text (the
// CommandArgs a Tracer or an Interceptor reads, through String, Redacted
// and GoString; respireotel's db.query.text, which is String; the message
// of a server's error reply, which may quote an argument) passes the words
// through redactWords, which replaces each argument that carries a
// credential with RedactedText. What counts as a credential is the
// reviewed table below, one function per command form; the spec has no
// sensitivity mark, but TestRedactionCoversSpecPasswords fails when a
// command of spec/commands.json gains an argument called password that
// the table does not handle. User names are kept (they name who acted and
// grant nothing); passwords, password hashes and key passphrases go.
//
//	AUTH [username] password            the password (every argument past AUTH if more than two)
//	HELLO ... AUTH username password     the password
//	MIGRATE ... AUTH password           the password
//	MIGRATE ... AUTH2 username password the password
//	CONFIG SET name value ...           the value of requirepass, masterauth, primaryauth,
//	                                    tls-key-file-pass, tls-client-key-file-pass
//	ACL SETUSER name rule ...           the rules >pw, <pw, #hash, !hash (and a rule
//	                                    argument holding one of them among others)
//	SENTINEL SET master option value    the value of auth-pass
//	SENTINEL CONFIG SET name value ...  the value of sentinel-pass
//
// Names and tokens are matched without regard to case, as servers do.

// RedactedText is what replaces a credential wherever the client renders
// a command: "AUTH app xxxxx", "ACL SETUSER app on >xxxxx ~* +@all". URL
// errors show a password the same way.
const RedactedText = "xxxxx"

// secretConfigs are the CONFIG SET parameters whose value is a secret, on
// the servers of the spec (Valkey's primaryauth is masterauth's new name).
// masteruser and primaryuser are user names, kept as AUTH's is.
var secretConfigs = []string{"requirepass", "masterauth", "primaryauth", "tls-key-file-pass", "tls-client-key-file-pass"}

// redactions holds the reviewed forms: a command (and its subcommand, or
// "") and the function that rewrites its words in place.
var redactions = []struct {
	cmd, sub string
	fn       func(w []string)
}{
	{"AUTH", "", redactAuth},
	{"HELLO", "", redactHello},
	{"MIGRATE", "", redactMigrate},
	{"CONFIG", "SET", func(w []string) { redactPairs(w, 2, secretConfigs) }},
	{"ACL", "SETUSER", redactACLRules},
	{"SENTINEL", "SET", func(w []string) { redactPairs(w, 3, []string{"auth-pass"}) }},
	{"SENTINEL", "CONFIG", redactSentinelConfig},
}

// redactWords replaces, in place, the words of a command (its name
// first) that carry credentials with RedactedText. It reports whether it
// changed any.
func redactWords(w []string) bool {
	f := redactionOf(w)
	if f == nil {
		return false
	}
	before := make([]string, len(w))
	copy(before, w)
	f(w)
	for i := range w {
		if w[i] != before[i] {
			return true
		}
	}
	return false
}

// redactionOf returns the function that redacts a command given as words,
// or nil for a command that carries no credential. It allocates nothing,
// since a tracer renders every command.
func redactionOf(w []string) func([]string) {
	if len(w) == 0 {
		return nil
	}
	for _, r := range redactions {
		if strings.EqualFold(w[0], r.cmd) && (r.sub == "" || len(w) > 1 && strings.EqualFold(w[1], r.sub)) {
			return r.fn
		}
	}
	return nil
}

// redactsName reports whether a command of this name (as cmd.name gives
// it, upper case: "CONFIG SET", "ACL SETUSER", or a raw command's first
// word) may carry a credential; a cheap test before looking at the words.
func redactsName(name string) bool {
	first, _, _ := strings.Cut(name, " ")
	for _, r := range redactions {
		if first == r.cmd {
			return true
		}
	}
	return false
}

// redactAuth: AUTH password, AUTH username password. Anything longer is
// not a valid AUTH: every argument goes.
func redactAuth(w []string) {
	switch len(w) {
	case 1:
	case 2:
		w[1] = RedactedText
	case 3:
		w[2] = RedactedText
	default:
		for i := 1; i < len(w); i++ {
			w[i] = RedactedText
		}
	}
}

// redactHello: HELLO [protover [AUTH username password] [SETNAME name]].
func redactHello(w []string) {
	for i := 1; i < len(w); i++ {
		switch {
		case strings.EqualFold(w[i], "AUTH"):
			redactAfter(w, i, 2)
			i += 2
		case strings.EqualFold(w[i], "SETNAME"):
			i++ // a client named AUTH is a name, not the token
		}
	}
}

// redactMigrate: MIGRATE host port key|"" db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...]. The tokens are
// looked for from the first argument, so that a command missing one of the
// five leading arguments still hides its password; KEYS ends the search
// only where it can be the token.
func redactMigrate(w []string) {
	for i := 1; i < len(w); i++ {
		switch {
		case strings.EqualFold(w[i], "AUTH"):
			redactAfter(w, i, 1)
			i++
		case strings.EqualFold(w[i], "AUTH2"):
			redactAfter(w, i, 2)
			i += 2
		case i >= 6 && strings.EqualFold(w[i], "KEYS"):
			return
		}
	}
}

// redactAfter hides the password that follows the token at w[i]: the
// n-th word after it (the last one there is when the command is cut
// short).
func redactAfter(w []string, i, n int) {
	if j := min(i+n, len(w)-1); j > i {
		w[j] = RedactedText
	}
}

// redactPairs hides the values of the secret names among the name value
// pairs from w[from] on.
func redactPairs(w []string, from int, secret []string) {
	for i := from; i+1 < len(w); i += 2 {
		for _, s := range secret {
			if strings.EqualFold(w[i], s) {
				w[i+1] = RedactedText
				break
			}
		}
	}
}

// redactSentinelConfig: SENTINEL CONFIG SET name value [name value ...].
func redactSentinelConfig(w []string) {
	if len(w) > 2 && strings.EqualFold(w[2], "SET") {
		redactPairs(w, 3, []string{"sentinel-pass"})
	}
}

// redactACLRules: ACL SETUSER username [rule ...]. A rule that adds or
// removes a password or its hash keeps its first character; an argument
// that holds such a rule among other words (which the server refuses,
// quoting it) goes whole.
func redactACLRules(w []string) {
	for i := 3; i < len(w); i++ {
		r := w[i]
		switch {
		case r == "":
		case isPasswordRule(r):
			w[i] = r[:1] + RedactedText
		default:
			for _, f := range strings.Fields(r) {
				if isPasswordRule(strings.TrimLeft(f, "(")) {
					w[i] = RedactedText
					break
				}
			}
		}
	}
}

// isPasswordRule reports an ACL rule that carries a password (>pw, <pw)
// or its SHA-256 (#hash, !hash).
func isPasswordRule(r string) bool {
	return r != "" && strings.IndexByte("><#!", r[0]) >= 0
}

// hideSecrets rewrites the message of a server's error reply to the
// command whose words are w, so that an argument the server quotes (ACL
// SETUSER: "Error in ACL SETUSER modifier '>pw ...'") shows as rendered.
func hideSecrets(msg string, w []string) string {
	red := make([]string, len(w))
	copy(red, w)
	if !redactWords(red) {
		return msg
	}
	for i := range w {
		if red[i] == w[i] || w[i] == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, "'"+w[i]+"'", "'"+red[i]+"'")
		if len(w[i]) >= 4 {
			msg = strings.ReplaceAll(msg, w[i], red[i])
		}
	}
	return msg
}

// hideInError is hideSecrets for the *Error in err of a command given as
// Do's arguments (Conn.Do and SetupConn.Do, which read replies without a
// cmd).
func hideInError(err error, args []any) error {
	var e *Error
	if err == nil || len(args) == 0 || !errors.As(err, &e) || !redactsName(strings.ToUpper(word(args[0]))) {
		return err
	}
	w := make([]string, len(args))
	for i, a := range args {
		w[i], _ = anyText(a)
	}
	e.Message = hideSecrets(e.Message, w)
	return err
}
