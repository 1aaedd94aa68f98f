//go:build tools

// Package tools pins kwok, the fake-kubelet controller. Kept in its own module
// so that kwok's newer otel/grpc/x/* requirements do not change the
// dependency set the Kubernetes binaries are built with (upstream pins).
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
