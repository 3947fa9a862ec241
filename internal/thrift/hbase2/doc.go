// Package hbase2 is the generated Thrift client for the subset of HBase's
// Thrift2 gateway (THBaseService) that store/hbase uses.
//
// The IDL, hbase2.thrift, is written for this project; its field ids and
// types match HBase 2.x's hbase-thrift IDL. The generated files are
// committed, so building needs no Thrift compiler; regenerate them with
// Thrift 0.17, the version of github.com/apache/thrift in go.mod:
//
//	go generate ./internal/thrift/hbase2
package hbase2

//go:generate thrift --gen go:package_prefix=github.com/denorm/denorm/internal/thrift/,skip_remote -out .. hbase2.thrift
//go:generate gofmt -w .
