// go-redis's "should Watch/Unwatch" as a timing: 1000 goroutines each
// increment one key once with WATCH/GET/MULTI/SET/EXEC, retrying on abort.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "")
	n := flag.Int("n", 1000, "")
	flag.Parse()
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: *addr})
	client.Set(ctx, "key", "0", 0)
	var retries, execs int64
	incr := func(key string) error {
		for {
			err := client.Watch(ctx, func(tx *redis.Tx) error {
				n, err := tx.Get(ctx, key).Int64()
				if err != nil && err != redis.Nil {
					return err
				}
				atomic.AddInt64(&execs, 1)
				_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					pipe.Set(ctx, key, n+1, 0)
					return nil
				})
				return err
			}, key)
			if errors.Is(err, redis.TxFailedErr) {
				atomic.AddInt64(&retries, 1)
				continue
			}
			return err
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < *n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := incr("key"); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	v, _ := client.Get(ctx, "key").Int64()
	fmt.Printf("%s: %v, key=%d, EXECs %d, aborted %d\n", *addr, time.Since(start).Round(time.Millisecond), v, execs, retries)
}
