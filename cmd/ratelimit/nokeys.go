package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// warnNoKeys explains an audit that found no key: a wrong server, prefix
// or db looks exactly like a service nobody is using, so it names what to
// check, with the key counts of INFO keyspace.
func (t *target) warnNoKeys(ctx context.Context, w io.Writer) {
	fmt.Fprintf(w, "ratelimit: WARNING: no keys under prefix %q or its sub-prefixes (%s:*) on %s\n", t.prefix, t.prefix, t.desc)
	fmt.Fprintln(w, "  wrong server? point --redis URL (or --cluster, --sentinel, $"+envRedisURL+") at the limiters' Redis")
	dbs, err := t.keyspace(ctx)
	if err != nil {
		fmt.Fprintf(w, "  (INFO keyspace failed: %v)\n", err)
		return
	}
	db := t.db()
	if n := dbs[db]; n > 0 {
		fmt.Fprintf(w, "  wrong prefix? db %d holds %s, none under %s:; give --prefix the limiters' core.WithPrefix\n", db, plural(int(n), "key"), t.prefix)
	} else {
		fmt.Fprintf(w, "  db %d of this server holds no keys at all\n", db)
	}
	for _, other := range slices.Sorted(maps.Keys(dbs)) {
		if other != db && dbs[other] > 0 {
			fmt.Fprintf(w, "  different db? db %d holds %s: add /%d to the URL (redis://host:port/%d)\n", other, plural(int(dbs[other]), "key"), other, other)
		}
	}
	fmt.Fprintln(w, "  idle? keys expire once their client is back at full quota, so a service without recent traffic has none")
}

// db returns the database the target works on (always 0 on a Cluster).
func (t *target) db() int {
	if c, ok := t.client.(*redis.Client); ok {
		return c.Options().DB
	}
	return 0
}

// keyspace returns the number of keys of each database that has any, summed
// over the nodes (INFO keyspace).
func (t *target) keyspace(ctx context.Context) (map[int]int64, error) {
	var mu sync.Mutex
	dbs := map[int]int64{}
	err := t.forEachNode(ctx, func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, "keyspace").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for db, n := range parseKeyspace(info) {
			dbs[db] += n
		}
		return nil
	})
	return dbs, err
}

// parseKeyspace reads the lines "db0:keys=12,expires=12,avg_ttl=0" of INFO
// keyspace.
func parseKeyspace(info string) map[int]int64 {
	dbs := map[int]int64{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		num, isDB := strings.CutPrefix(name, "db")
		db, err := strconv.Atoi(num)
		if !ok || !isDB || err != nil {
			continue
		}
		for _, f := range strings.Split(fields, ",") {
			if v, ok := strings.CutPrefix(f, "keys="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				dbs[db] += n
			}
		}
	}
	return dbs
}
