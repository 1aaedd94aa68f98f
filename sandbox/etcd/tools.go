//go:build tools

// Package tools pins the etcd server (its main package is the module root).
// Kept in its own module so that etcd's grpc/otel versions stay out of the
// Kubernetes build.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
