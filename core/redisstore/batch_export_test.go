package redisstore

// WithBatchingAlone is [WithBatching] where a lone take is also sent as a
// pipeline (of one), so that the conformance suites, which mostly take one
// at a time, check the pipeline path's replies, errors and NOSCRIPT
// resends. Tests only.
func WithBatchingAlone() Option {
	return func(c *config) { c.batchOn, c.batchAlone = true, true }
}

// MaxInFlight is how many calls a batching store has in flight at most.
const MaxInFlight = maxInFlight

// MasterQueues returns how many masters a batching store on a cluster
// client keeps a queue for, or -1 if it keeps none.
func MasterQueues(s *Store) int {
	m, ok := s.batch.(*masterBatchers)
	if !ok {
		return -1
	}
	return len(*m.queues.Load())
}
