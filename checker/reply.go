// Replies as text the model can produce and compare: "$bulk" (status
// replies too: go-redis does not tell them apart), ":int", "nil", "[a,b]",
// and error classes "!WRONGTYPE" and "!NOTINT". Any other error reply is
// unexpected for these workloads and is kept whole as "!ERR <message>".
package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// outcome says what a command's result means for the check.
type outcome int

const (
	definite   outcome = iota // a reply the model must predict
	unexpected                // an error reply Redis would not give here
	lost                      // no reply (network error, timeout, killed server)
)

// encode turns one go-redis result into reply text.
func encode(val interface{}, err error) (string, outcome) {
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return "nil", definite
		}
		var rerr redis.Error
		if errors.As(err, &rerr) {
			return encodeError(rerr.Error())
		}
		return "?" + err.Error(), lost
	}
	return encodeValue(val)
}

func encodeError(msg string) (string, outcome) {
	switch {
	case strings.Contains(msg, "WRONGTYPE"):
		return "!WRONGTYPE", definite
	case strings.Contains(msg, "not an integer"):
		return "!NOTINT", definite
	}
	return "!ERR " + msg, unexpected
}

func encodeValue(val interface{}) (string, outcome) {
	switch v := val.(type) {
	case nil:
		return "nil", definite
	case string:
		return "$" + v, definite
	case int64:
		return ":" + strconv.FormatInt(v, 10), definite
	case redis.Error:
		return encodeError(v.Error())
	case error:
		return encodeError(v.Error())
	case []interface{}:
		parts := make([]string, len(v))
		worst := definite
		for i, item := range v {
			text, o := encodeValue(item)
			parts[i] = text
			if o > worst {
				worst = o
			}
		}
		return "[" + strings.Join(parts, ",") + "]", worst
	}
	return fmt.Sprintf("!ERR reply of type %T", val), unexpected
}
