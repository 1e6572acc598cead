// Package benchmarks compares Respire with go-redis, rueidis and redigo on
// one real server, shape by shape. It lives in a module of its own so that
// the peers never enter the root module's dependencies.
//
// bench_test.go holds the testing.B benchmarks (run them with -bench and
// compare with benchstat); cmd/load is the scenario load tool that also
// records latency percentiles, CPU per operation and the server's commands
// per read, and runs redis-benchmark as the ceiling. See README.md.
package benchmarks
