package redisstore

import "github.com/ratelimitkit/ratelimit/core"

var _ core.Capable = (*Store)(nil)

// Capabilities implements [core.Capable]: the store holds leases
// ([core.Leaser]), names the Cluster master of a key ([Store.Shard]),
// refuses a decision budget its client cannot keep ([Store.CheckTimeout])
// and has the Clock of [WithClock], if any. Its takes wait on the network:
// it is not NonBlocking.
func (s *Store) Capabilities() core.Capabilities { return s.caps }

// capabilities builds what [Store.Capabilities] returns.
func (s *Store) capabilities() core.Capabilities {
	return core.Capabilities{Shard: s.Shard, Clock: s.now, CheckTimeout: s.CheckTimeout, Leases: true, Lockouts: true}
}
