package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRejectsInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"nil clock", []Option{WithClock(nil)}, "WithClock"},
		{"zero keys", []Option{WithMaxKeys(0)}, "WithMaxKeys must be positive, got 0"},
		{"negative keys", []Option{WithMaxKeys(-1)}, "WithMaxKeys"},
		{"zero shards", []Option{WithShards(0)}, "WithShards must be a power of two"},
		{"shards not a power of two", []Option{WithShards(3)}, "got 3"},
		{"too many shards", []Option{WithShards(1 << 17)}, "WithShards"},
		{"fewer keys than shards", []Option{WithShards(64), WithMaxKeys(10)}, "WithMaxKeys(10) is smaller than WithShards(64)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.opts...)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), "ratelimit: memstore: ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestNewSharesMaxKeysAmongShards(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		wantShards int
		wantKeys   int
	}{
		{"defaults", nil, DefaultShards, DefaultMaxKeys},
		{"uneven share", []Option{WithMaxKeys(100), WithShards(64)}, 64, 100},
		{"few keys lower the default shards", []Option{WithMaxKeys(10)}, 8, 10},
		{"one key", []Option{WithMaxKeys(1)}, 1, 1},
		{"explicit shards", []Option{WithShards(1)}, 1, DefaultMaxKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(append(tt.opts, WithClock(time.Now))...)
			require.NoError(t, err)
			assert.Len(t, s.shards, tt.wantShards)
			total := 0
			for i := range s.shards {
				assert.Positive(t, s.shards[i].maxKeys)
				total += s.shards[i].maxKeys
			}
			assert.Equal(t, tt.wantKeys, total)
		})
	}
}

func TestHashTag(t *testing.T) {
	tests := []struct {
		key  string
		want string
	}{
		{"rl:{alice}:minute:g", "alice"},
		{"rl:{alice}:{bob}", "alice"},
		{"rl:alice", "rl:alice"},
		{"rl:{}:x", "rl:{}:x"},
		{"rl:{alice", "rl:{alice"},
		{"rl:}{alice}", "alice"},
		{"{a}", "a"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.want, hashTag(tt.key))
		})
	}
}

func TestKeysOfOneClientShareAShard(t *testing.T) {
	s, err := New()
	require.NoError(t, err)
	assert.Equal(t, s.shardOf("rl:{alice}:minute:g"), s.shardOf("other:{alice}:day:f"))
}

// A take finds the shard of its first key only; the others share it when
// they share its tag. Whatever the keys, each lands in the shard of its
// own tag, as a take of it alone would put it.
func TestShardsOfATakeAreTheKeysOwn(t *testing.T) {
	s, err := New(WithShards(64))
	require.NoError(t, err)
	tests := [][]string{
		{"rl:{alice}:m:g", "rl:{alice}:d:f", "rl:{alice}:h:g"},
		{"rl:{alice}:m:g", "rl:{bob}:d:f", "other:{alice}:d:f"},
		{"rl:{alice}:m:g", "rl:{alice}", "rl:{alice", "rl:{alicex}:m"},
		{"rl:alice", "rl:alice:m", "rl:{alice}:m"},
		{"rl:{}:x", "rl:{}:x:y", "rl:{a}"},
		{"{a}", "{a}b", "{a}"},
		{"", "{a}", ""},
	}
	for _, keys := range tests {
		slots := make([]slot, len(keys))
		s.shardsOf(keys, slots)
		for i, k := range keys {
			assert.Equal(t, s.shardOf(k), slots[i].shard, "keys %q: %q", keys, k)
		}
	}
}
