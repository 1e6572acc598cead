//go:build !linux

package codec_test

// threadCPU is not measured outside Linux; the cpu-ns/op metric reads 0.
func threadCPU() int64 { return 0 }

func lockThread() func() { return func() {} }
