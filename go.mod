module github.com/respire-go/respire

go 1.25

require (
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/andybalholm/brotli v1.3.0
	github.com/dave/jennifer v1.7.1
	github.com/klauspost/compress v1.20.4
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/zeebo/xxh3 v1.1.0
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
