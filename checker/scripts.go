// The EVAL scripts of the workloads, each as the Lua the server runs and
// the Go the model runs. A model script calls commands through `call`,
// which returns encoded replies; an error reply ends the script with that
// error, as redis.call does (the writes before it stay: scripts do not roll
// back).
package main

import (
	"strconv"
	"strings"
)

type script struct {
	lua string
	run func(call func(args ...string) string, keys, argv []string) string
}

// errStop carries a redis.call error out of a model script.
type errStop struct{ reply string }

var scripts = map[string]script{
	// Increments a counter and appends its new value to a list.
	"incr_push": {
		lua: `local n = redis.call('INCR', KEYS[1])
local len = redis.call('RPUSH', KEYS[2], n)
return {n, len}`,
		run: func(call func(args ...string) string, keys, argv []string) string {
			n := call("INCR", keys[0])
			length := call("RPUSH", keys[1], n[1:])
			return "[" + n + "," + length + "]"
		},
	},
	// Moves the head of one list to the tail of another.
	"move": {
		lua: `local v = redis.call('LPOP', KEYS[1])
if v then redis.call('RPUSH', KEYS[2], v) end
return v`,
		run: func(call func(args ...string) string, keys, argv []string) string {
			v := call("LPOP", keys[0])
			if v != "nil" {
				call("RPUSH", keys[1], v[1:])
			}
			return v
		},
	},
	// Reads every key named, whatever its type, in one atomic step.
	"read_all": {
		lua: `local out = {}
for i, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k).ok
  if t == 'string' then out[i] = 's:' .. redis.call('GET', k)
  elseif t == 'list' then out[i] = 'l:' .. table.concat(redis.call('LRANGE', k, 0, -1), ' ')
  else out[i] = t end
end
return out`,
		run: func(call func(args ...string) string, keys, argv []string) string {
			out := make([]string, len(keys))
			for i, k := range keys {
				switch call("TYPE", k) {
				case "$string":
					out[i] = "$s:" + call("GET", k)[1:]
				case "$list":
					items := decodeList(call("LRANGE", k, "0", "-1"))
					out[i] = "$l:" + strings.Join(items, " ")
				default:
					out[i] = "$none"
				}
			}
			return "[" + strings.Join(out, ",") + "]"
		},
	},
	// FLUSHDB between writes: what follows must see an empty database.
	"flush_then": {
		lua: `redis.call('SET', KEYS[1], ARGV[1])
redis.call('FLUSHDB')
redis.call('RPUSH', KEYS[2], ARGV[1])
return {redis.call('EXISTS', KEYS[1]), redis.call('LLEN', KEYS[2])}`,
		run: func(call func(args ...string) string, keys, argv []string) string {
			call("SET", keys[0], argv[0])
			call("FLUSHDB")
			call("RPUSH", keys[1], argv[0])
			return "[" + call("EXISTS", keys[0]) + "," + call("LLEN", keys[1]) + "]"
		},
	},
	// SWAPDB, then reads and writes the swapped-in database.
	"swap_then": {
		lua: `redis.call('SWAPDB', 0, 1)
local t = redis.call('TYPE', KEYS[1]).ok
redis.call('SET', KEYS[1], ARGV[1])
return {t, redis.call('GET', KEYS[1])}`,
		run: func(call func(args ...string) string, keys, argv []string) string {
			call("SWAPDB", "0", "1")
			t := call("TYPE", keys[0])
			call("SET", keys[0], argv[0])
			return "[" + t + "," + call("GET", keys[0]) + "]"
		},
	},
}

// decodeList turns an encoded array of bulk strings back into its items.
func decodeList(reply string) []string {
	body := strings.TrimSuffix(strings.TrimPrefix(reply, "["), "]")
	if body == "" {
		return nil
	}
	parts := strings.Split(body, ",")
	for i, p := range parts {
		parts[i] = strings.TrimPrefix(p, "$")
	}
	return parts
}

// runScript is the model of EVAL: args are EVAL name numkeys keys... argv...
func runScript(ks *Keyspace, db *int, args []string) (reply string) {
	s, ok := scripts[args[1]]
	if !ok {
		panic("model: unknown script " + args[1])
	}
	numkeys, _ := strconv.Atoi(args[2])
	keys := args[3 : 3+numkeys]
	argv := args[3+numkeys:]
	call := func(cmd ...string) string {
		r := runCommand(ks, db, cmd)
		if strings.HasPrefix(r, "!") {
			panic(errStop{r})
		}
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			stop, ok := p.(errStop)
			if !ok {
				panic(p)
			}
			reply = stop.reply
		}
	}()
	return s.run(call, keys, argv)
}
