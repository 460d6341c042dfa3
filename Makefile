# The two set-up commands of the README, and a few conveniences.
GO ?= go

.PHONY: demo test build image fuzz bench

# One agent, offline, on a recorded page with the embedded default: no
# config, no network, no key. The result and report land in demo-out/.
demo:
	./scripts/demo

# Installs what the tests need when missing, starts a throwaway redis-server,
# runs go vet and go test -race, and stops what it started.
test:
	./scripts/test

# bin/headroom, its version stamped from git (scripts/version): headroom
# version prints it.
build:
	$(GO) build -buildvcs=true -ldflags "-X main.version=$$(./scripts/version)" -o bin/headroom ./cmd/headroom

# The container image, its version stamped the same way.
image:
	docker build --build-arg VERSION=$$(./scripts/version) -t headroom .

# Each fuzz target for a short while; FUZZTIME=5m for longer.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/yamlconf
	$(GO) test -run '^$$' -fuzz '^FuzzAliasBound$$' -fuzztime $(FUZZTIME) ./internal/yamlconf
	$(GO) test -run '^$$' -fuzz '^FuzzReadBounded$$' -fuzztime $(FUZZTIME) ./internal/safefile
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./llm/azuresim
	$(GO) test -run '^$$' -fuzz '^FuzzParseDeploymentFlag$$' -fuzztime $(FUZZTIME) ./llm/azuresim
	$(GO) test -run '^$$' -fuzz '^FuzzChatBody$$' -fuzztime $(FUZZTIME) ./llm/azuresim
	$(GO) test -run '^$$' -fuzz '^FuzzHeuristic$$' -fuzztime $(FUZZTIME) ./llm/azuresim/heuristic
	$(GO) test -run '^$$' -fuzz '^FuzzChatResponse$$' -fuzztime $(FUZZTIME) ./llm
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./calltypes
	$(GO) test -run '^$$' -fuzz '^FuzzParseTaken$$' -fuzztime $(FUZZTIME) ./calltypes
	$(GO) test -run '^$$' -fuzz '^FuzzParsePage$$' -fuzztime $(FUZZTIME) ./calltypes
	$(GO) test -run '^$$' -fuzz '^FuzzMessage$$' -fuzztime $(FUZZTIME) ./calltypes
	$(GO) test -run '^$$' -fuzz '^FuzzPageWords$$' -fuzztime $(FUZZTIME) ./calltypes
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./config
	$(GO) test -run '^$$' -fuzz '^FuzzParseTask$$' -fuzztime $(FUZZTIME) ./agent
	$(GO) test -run '^$$' -fuzz '^FuzzParseTaskList$$' -fuzztime $(FUZZTIME) ./agent
	$(GO) test -run '^$$' -fuzz '^FuzzAnswerOf$$' -fuzztime $(FUZZTIME) ./agent
	$(GO) test -run '^$$' -fuzz '^FuzzCheckKey$$' -fuzztime $(FUZZTIME) ./agent/learned
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./agent/learned
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./budget
	$(GO) test -run '^$$' -fuzz '^FuzzParseFeedback$$' -fuzztime $(FUZZTIME) ./budget
	$(GO) test -run '^$$' -fuzz '^FuzzParseSteps$$' -fuzztime $(FUZZTIME) ./browser
	$(GO) test -run '^$$' -fuzz '^FuzzParseStorageState$$' -fuzztime $(FUZZTIME) ./browser
	$(GO) test -run '^$$' -fuzz '^FuzzCheckDomain$$' -fuzztime $(FUZZTIME) ./browser
	$(GO) test -run '^$$' -fuzz '^FuzzPDFText$$' -fuzztime $(FUZZTIME) ./browser
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./browser/replay
	$(GO) test -run '^$$' -fuzz '^FuzzText$$' -fuzztime $(FUZZTIME) ./internal/redact
	$(GO) test -run '^$$' -fuzz '^FuzzSecretFound$$' -fuzztime $(FUZZTIME) ./internal/redact
	$(GO) test -run '^$$' -fuzz '^FuzzEscape$$' -fuzztime $(FUZZTIME) ./internal/plain

bench:
	$(GO) test -run '^$$' -bench . ./...
