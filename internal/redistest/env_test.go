package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExistingServersFromEnvironment(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://:secret@db.example:6380/2")
	t.Setenv("REDIS_CLUSTER_ADDRS", "10.0.0.1:7000,10.0.0.2:7000")

	srv, err := openStandalone()
	require.NoError(t, err)
	cluster, err := openCluster()
	require.NoError(t, err)

	assert.Equal(t, "db.example:6380", srv.Addr())
	assert.Equal(t, 2, srv.Options().DB)
	assert.False(t, srv.Started(), "a REDIS_URL server is not ours to flush or stop")
	assert.Equal(t, []string{"10.0.0.1:7000", "10.0.0.2:7000"}, cluster.Addrs())
	assert.False(t, cluster.Started())
}

func TestClusterInfoHas(t *testing.T) {
	want := map[string]string{"cluster_state": "ok", "cluster_known_nodes": "3"}
	tests := []struct {
		name string
		info string
		ok   bool
	}{
		{"healthy", "cluster_state:ok\r\ncluster_slots_ok:16384\r\ncluster_known_nodes:3\r\n", true},
		{"still failing", "cluster_state:fail\r\ncluster_known_nodes:3\r\n", false},
		{"not all nodes met", "cluster_state:ok\r\ncluster_known_nodes:2\r\n", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, clusterInfoHas(tt.info, want))
		})
	}
}
