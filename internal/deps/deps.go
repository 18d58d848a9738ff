// Package deps pins the project's dependencies in go.mod while the packages
// that use them are being written, so parallel work never races on go.mod.
// Delete it once every dependency is imported by real code.
package deps

import (
	_ "github.com/gin-gonic/gin"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/labstack/echo/v4"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
)
