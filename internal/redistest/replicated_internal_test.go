package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// clusterNodes is a CLUSTER NODES reply of a six-node cluster whose first
// master has failed over: 39795 took over from 44867.
const clusterNodes = `aaa 127.0.0.1:44867@54867 master,fail - 0 0 1 disconnected
bbb 127.0.0.1:39859@49859 myself,master - 0 0 2 connected 5461-10922
ccc 127.0.0.1:38947@48947 master - 0 0 3 connected 10923-16383
ddd 127.0.0.1:39795@49795 master - 0 0 7 connected 0-5460
eee 127.0.0.1:34517@44517 slave bbb 0 0 2 connected
fff 127.0.0.1:34315@44315 slave ccc 0 0 3 connected
`

func TestShardOf(t *testing.T) {
	tests := []struct {
		slot            int64
		master, replica string
	}{
		{0, "127.0.0.1:39795", ""},
		{5461, "127.0.0.1:39859", "127.0.0.1:34517"},
		{16383, "127.0.0.1:38947", "127.0.0.1:34315"},
	}
	for _, tt := range tests {
		master, replica := shardOf(clusterNodes, tt.slot)
		assert.Equal(t, tt.master, master, "master of slot %d", tt.slot)
		assert.Equal(t, tt.replica, replica, "replica of slot %d", tt.slot)
	}
}

func TestReplicatedView(t *testing.T) {
	assert.False(t, replicatedView(clusterNodes, false), "a failed master")
	healthy := `a 1:1@2 master - 0 0 1 connected 0-5460
b 1:2@2 master - 0 0 2 connected 5461-10922
c 1:3@2 myself,master - 0 0 3 connected 10923-16383
d 1:4@2 slave a 0 0 1 connected
e 1:5@2 slave b 0 0 2 connected
f 1:6@2 slave c 0 0 3 connected
`
	assert.True(t, replicatedView(healthy, false))
	assert.False(t, replicatedView(healthy, true), "a replica whose link is not up yet")
	assert.True(t, replicatedView(healthy+"master_link_status:up\r\n", true))
}
