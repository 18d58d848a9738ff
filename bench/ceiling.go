package main

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The Redis ceiling: an EVALSHA of a script that only returns 1, sent by
// the same client ours uses. No rate limiter that needs one script call per
// check can beat it on this machine; every Redis family runs it beside the
// others, so each contender's share of the ceiling is measured in the same
// round.

const noopScript = "return 1"

// ceiling is the plain-client EVALSHA of noopScript, with the key of the
// check as KEYS[1] like a limiter's script.
func ceiling() contender {
	return contender{name: "ceiling: EVALSHA return 1", redis: true, open: func(e env) (*instance, error) {
		client := e.oursClient()
		return noopInstance(e, client, func() { _ = client.Close() }), nil
	}}
}

// ceilingAutoPipeline is ceiling through go-redis's AutoPipeliner.
func ceilingAutoPipeline() contender {
	return contender{name: "ceiling: EVALSHA return 1, AutoPipeline", redis: true, open: func(e env) (*instance, error) {
		client := e.oursClient()
		ap, err := client.AutoPipeline()
		if err != nil {
			_ = client.Close()
			return nil, err
		}
		return noopInstance(e, ap, func() { _ = ap.Close(); _ = client.Close() }), nil
	}}
}

func noopInstance(e env, s redis.Scripter, closeFn func()) *instance {
	script := redis.NewScript(noopScript)
	keys := make([][]string, e.keys)
	for i, key := range e.nsIDs() {
		keys[i] = []string{key}
	}
	return &instance{close: closeFn, newWorker: func() checkFunc {
		return func(ctx context.Context, k int) (bool, error) {
			return true, script.Run(ctx, s, keys[k]).Err()
		}
	}}
}
