package lock

import "github.com/respire-go/respire/respire"

// acquire takes the lock and increments its fence counter, or reports the
// holder's remaining TTL. KEYS: the lock key, the fence key (same slot).
// ARGV: the owner string, the TTL in milliseconds. Reply: {1, token} or
// {0, pttl}.
var acquire = respire.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
`)

// release deletes the lock key if it still holds the owner string, and
// then publishes the key to ARGV[2] unless it is empty. KEYS: the lock key.
// ARGV: the owner string, the channel. Reply: 1 if released, 0 if not held.
var release = respire.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[2], KEYS[1])
end
return 1
`)

// refresh sets a new TTL on the lock key if it still holds the owner
// string. KEYS: the lock key. ARGV: the owner string, the TTL in
// milliseconds. Reply: 1 if refreshed, 0 if not held.
var refresh = respire.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
`)
