package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const infoBefore = "# CPU\r\nused_cpu_sys:1.000000\r\nused_cpu_user:2.000000\r\nused_cpu_sys_children:9.0\r\n" +
	"# Stats\r\ntotal_net_input_bytes:1000\r\n" +
	"# Commandstats\r\ncmdstat_evalsha:calls=10,usec=50,usec_per_call=5.00\r\ncmdstat_info:calls=3,usec=9\r\n"

const infoAfter = "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.500000\r\n" +
	"# Stats\r\ntotal_net_input_bytes:21000\r\n" +
	"# Commandstats\r\ncmdstat_evalsha:calls=110,usec=550\r\ncmdstat_get:calls=100,usec=90\r\ncmdstat_info:calls=5,usec=15\r\n"

func TestCostSince(t *testing.T) {
	c := costSince(parseInfo(infoBefore), parseInfo(infoAfter), 100)
	assert.InDelta(t, 10_000.0, c.cpuMicros, 1e-6, "1 s of CPU over 100 checks; children's CPU is not the server's")
	assert.Equal(t, 2.0, c.commands, "INFO is left out")
	assert.Equal(t, 200.0, c.inputBytes)
	assert.Equal(t, "EVALSHA 1, GET 1", mixString(c.mix))
}

func TestMixStringDropsRareCommands(t *testing.T) {
	assert.Equal(t, "GET 2, TIME 1", mixString(map[string]float64{"time": 1, "get": 2, "hello": 0.001}))
}
