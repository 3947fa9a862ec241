# denorm's build and test entry points. The logic of test, fuzz and demo
# lives in scripts/ so that it can be read and run on its own.

GO        ?= go
BIN       := bin/denorm
COMMIT    := $(shell git rev-parse HEAD 2>/dev/null)
VERSION   := $(shell git describe --tags --dirty 2>/dev/null)
LDFLAGS   := $(if $(COMMIT),-X main.commit=$(COMMIT)) $(if $(VERSION),-X main.version=$(VERSION))
BENCHTIME ?= 1x
FUZZTIME  ?= 10s

.PHONY: all build demo test test-unit bench fuzz testenv-up testenv-down clean

all: build

## build: the denorm command in bin/denorm
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/denorm

## demo: build, then create a table, put, get and scan on ./denorm-data
demo: build
	bash scripts/demo.sh

## test: the whole suite: real HBase and Kafka up, go vet, go test -race, both down
test:
	bash scripts/test.sh

## test-unit: go vet and the race-enabled tests without starting any service
## (tests that need HBase skip, or fail when CI=true)
test-unit:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

## bench: every benchmark, briefly (BENCHTIME=2s for real figures)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

## fuzz: a short run of every Fuzz target (FUZZTIME per target)
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## testenv-up / testenv-down: start or stop the test services (HBase, Kafka);
## after testenv-up, `export $$(bash testenv/hbase.sh env)` points tests at them
testenv-up:
	bash testenv/hbase.sh start
	bash testenv/kafka.sh start
	@bash testenv/hbase.sh env
	@bash testenv/kafka.sh env

testenv-down:
	-bash testenv/kafka.sh stop
	bash testenv/hbase.sh stop

clean:
	rm -rf bin
